"""The command line, on top of everything: click lives only here. One module per command
group turns options into plain values for the core and its output back into text or --json;
errors.py is the one place exceptions become exit codes. May import every stage below."""
