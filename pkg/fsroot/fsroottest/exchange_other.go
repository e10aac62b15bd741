//go:build !linux

package fsroottest

import "os"

// exchange swaps two names with three renames (no atomic exchange here).
func exchange(a, b string) error {
	tmp := a + ".swap"
	if err := os.Rename(a, tmp); err != nil {
		return err
	}
	if err := os.Rename(b, a); err != nil {
		os.Rename(tmp, a)
		return err
	}
	return os.Rename(tmp, b)
}
