"""The imperative shell: the only code that reads files, clocks and signals, and writes lines."""
