package main

// peakRSS is the process's peak resident set size in bytes: 0, as it is
// not measured on Windows.
func peakRSS() int64 { return 0 }
