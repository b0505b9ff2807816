//go:build !linux

package main

// exchangeDirs swaps the directories a and b; without renameat2 it takes
// two renames, and b is missing for the moment between them.
func exchangeDirs(a, b string) error { return renameBoth(a, b) }
