package kimi

import (
	"fmt"

	"github.com/sessctl/sessctl/pkg/checkpoint"
)

func errMechanism(m checkpoint.Mechanism) error {
	return fmt.Errorf("kimi sessions are reverted with kimi-cli's own revert_to, not %s", m)
}
