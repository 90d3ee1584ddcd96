// smp_go: a Go program for the sampler (t110).  Go links statically, starts
// its threads with its own clone, and runs goroutines on stacks whose
// outermost frame is runtime.goexit, the main goroutine's too.
//
//	smp_go G N   G goroutines each call work(N) (a loop of its own) and
//	             churn(N/2000) (allocations, so the collector runs), then
//	             main sums the results and prints them
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

//go:noinline
func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i % 7
	}
	return s
}

//go:noinline
func churn(n int) int {
	var keep [][]byte
	t := 0
	for i := 0; i < n; i++ {
		b := make([]byte, 512)
		b[i%512] = byte(i)
		t += int(b[i%512])
		if i%64 == 0 {
			keep = append(keep, b)
		}
	}
	return t + len(keep)
}

func main() {
	g, _ := strconv.Atoi(os.Args[1])
	n, _ := strconv.Atoi(os.Args[2])
	var wg sync.WaitGroup
	res := make([]int, g)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res[i] = work(n) + churn(n/2000)
		}(i)
	}
	wg.Wait()
	sum := 0
	for _, r := range res {
		sum += r
	}
	fmt.Println(g, sum)
}
