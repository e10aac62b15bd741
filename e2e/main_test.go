package e2e

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	RemoveSessctlBinary()
	os.Exit(code)
}
