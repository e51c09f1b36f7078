-- How much a report shows and reads (vkit.report.*): presentation limits,
-- each with the reason for its number.  The full evidence stays retained;
-- a report that shows less says how much more there is.
local KiB = 1024

return {
  -- Digits of a commit id in a report's subject: git's own default
  -- abbreviation grows past 7 in large repositories; 12 stays unique in
  -- any repository a reviewer meets, and --json keeps the full ids.
  short_id_digits = 12,
  -- Findings of one method kept in the report model (JSON, SARIF, JUnit);
  -- the model records the total, and every violating input is also in the
  -- method's input ranges, so nothing is lost by the cap.
  findings_kept = 200,
  -- Findings listed by value per method in each human format; past these,
  -- "… and N more" points to the JSON report.  A terminal reads five, a
  -- pull-request comment twenty, a page fifty.
  findings_shown = { text = 5, markdown = 20, html = 50 },
  -- Of a stderr kept only as a retained file, the tail read for a cause
  -- line: an exception's traceback is at its end.
  stderr_tail_bytes = 16 * KiB,
  -- Cells along each axis of the HTML report's grid of a multi-parameter
  -- domain (vkit.report.grid): an axis of more values bins them, ceil(n /
  -- 64) values a cell.  64 cells of 13 px fill the page's 840 px drawing
  -- width while a cell stays large enough to see and point at, and 64 x 64
  -- is 4,096 cells: the page stays a bounded size whatever the domain.
  grid_cells_per_axis = 64,
}
