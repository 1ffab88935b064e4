// perf-go-traces: CPU samples of a running Go binary that serves no pprof (kube-apiserver with --profiling=false, as a
// bench's cluster runs it), taken from outside with perf, in the form `go tool pprof -traces` prints, for
// bench/apiserver-profile-summary.ts --traces. The Kubernetes binaries are stripped of their symbol table; function
// names come from the pclntab that every Go binary keeps. Go keeps frame pointers, so perf's call chains are whole.
//
//	perf record -e cpu-clock -F 99 -g -p <pid> -o apiserver.data -- sleep 30
//	perf script -i apiserver.data -F comm,ip,sym | go run ./hack/perf-go-traces <binary> 10.101 0x400000 > apiserver.traces
//
// Arguments: the binary, the milliseconds one sample stands for (1000 / perf's -F), and what to add to perf's
// addresses to get the binary's (its first LOAD segment's address for a non-PIE binary: 0x400000).
package main

import (
	"bufio"
	"debug/elf"
	"debug/gosym"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	f, err := elf.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	pcln, err := f.Section(".gopclntab").Data()
	if err != nil {
		panic(err)
	}
	lt := gosym.NewLineTable(pcln, f.Section(".text").Addr)
	tab, err := gosym.NewTable(nil, lt)
	if err != nil {
		panic(err)
	}
	msPerSample := os.Args[2]
	offset, _ := strconv.ParseUint(os.Args[3], 0, 64)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var frames []string
	flush := func() {
		if len(frames) == 0 {
			return
		}
		fmt.Fprintln(out, "-----------+-------------------------------------------------------")
		fmt.Fprintf(out, "      %sms   %s\n", msPerSample, frames[0])
		for _, fr := range frames[1:] {
			fmt.Fprintf(out, "             %s\n", fr)
		}
		frames = frames[:0]
	}
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			flush()
			continue
		}
		fields := strings.Fields(line)
		pc, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil {
			continue // the sample's header line
		}
		name := "?"
		if fn := tab.PCToFunc(pc + offset); fn != nil {
			name = fn.Name
		} else if len(fields) > 1 {
			name = fields[1]
		}
		frames = append(frames, name)
	}
	flush()
}
