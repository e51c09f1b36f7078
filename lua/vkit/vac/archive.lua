local M = {}
function M.is_archive_name(p) return p:match "%.tar%.gz$" or p:match "%.tgz$" or p:match "%.tar$" end
return M
