"""Pure parsers: kernel text in, frozen snapshot (or a `Result` of one) out. No I/O, no clock (STYLE.md)."""
