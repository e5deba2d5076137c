"""The read side: sample lines read back, summarised and drawn (`orca metrics`, `read_samples`,
`read_newest_minute`; docs/metrics.md). Its rooms are docs/architecture.md's; all but `shell/` is pure."""
