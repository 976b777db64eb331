"""Attention read as word alignment: teacher-forced attention (forced), links from a run
(extract), AER on the RWTH gold (aer), guided-alignment training (guided), the commands (cli)."""
