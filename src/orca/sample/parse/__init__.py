"""Pure parsers: kernel text in, frozen snapshot (or a `Result` of one) out. No I/O, no clock, so that any text can be
tested as the kernel would print it (docs/behaviour.md §7)."""
