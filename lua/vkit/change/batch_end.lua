--- The end of every batch driver, per language (vkit.change.batch_drivers
-- for the seed's profile, vkit.change.signature_drivers for the
-- multi-parameter one): the cause lines to stderr, then all of stdout in
-- one write, retried on a short write; a failed write is exit status 5, a
-- protocol failure, never an observation.  Program text only.
local M = {}

M.rust = [==[
    flush_causes(&causes);
    let mut stdout = std::io::stdout();
    if stdout.write_all(out.as_bytes()).is_err() || stdout.flush().is_err() {
        std::process::exit(5);
    }
}
]==]

-- Python's write, exit and flush are main()'s defaults, bound before the
-- candidate was loaded.
M.python = [[
    flush_causes(causes)
    out = b"".join(lines)
    flush()
    while out:
        try:
            out = out[write(1, out):]
        except OSError:
            exit(5)
    exit(0)
main()
]]

-- TypeScript's writeSync, bytesOf and exit were taken before the candidate
-- was required.
M.typescript = [[
flushCauses(causes);
const bytes = bytesOf(out);
let off = 0;
while (off < bytes.length) {
  try {
    off += writeSync(1, bytes, off, bytes.length - off);
  } catch (e) {
    if (e.code !== 'EAGAIN') exit(5);
  }
}
]]

return M
