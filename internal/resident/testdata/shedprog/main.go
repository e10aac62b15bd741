// shedprog sheds its own executable (resident.ShedExecutable) and prints
// how many kB of its read-only mappings were resident before and after,
// for TestShedStaticExecutable and TestShedDynamicExecutable, which build
// it static and linked to libc. After the shed it looks up its user, which
// a build linked to libc does through libc (cgo): a page of a relocated
// mapping dropped (the dynamic linker's writes lost) would end it there.
package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/user"
	"regexp"
	"time"

	"github.com/sessctl/sessctl/internal/resident"
)

func main() {
	// code the measuring does not run, resident before the shed
	b, _ := json.Marshal(map[string]any{"a": []int{1, 2}, "b": time.Now().Format(time.RFC3339Nano)})
	_ = regexp.MustCompile(`^(x+|y{2,3})\d*$`).MatchString(fmt.Sprintf("%s %v", b, big.NewInt(7).Exp(big.NewInt(3), big.NewInt(99), nil)))
	resident.ExecutableKB() // the measuring's own pages
	before := resident.ExecutableKB()
	resident.ShedExecutable()
	after := resident.ExecutableKB()
	if _, err := user.Current(); err != nil {
		fmt.Fprintln(os.Stderr, "shedprog:", err)
		os.Exit(1)
	}
	fmt.Println(before, after)
	os.Exit(0)
}
