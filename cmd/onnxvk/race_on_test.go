//go:build race

package main

// raceEnabled reports a build with the race detector, whose shadow memory
// does not fit under prlimit --as.
const raceEnabled = true
