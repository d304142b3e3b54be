// goupload: a TCP upload of N bytes in 256 KiB writes while os/signal notifications arrive
// (SIGUSR1 every 2 ms, sent to the process) and two goroutines spin so that the runtime
// preempts them with SIGURG. Prints "wrote=N sha256=HEX signals=K".
//
//	goupload HOST:PORT BYTES
package main

import (
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n <= 0 {
		fmt.Fprintln(os.Stderr, "usage: goupload HOST:PORT BYTES")
		os.Exit(2)
	}
	data := make([]byte, n)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x >> 24)
	}
	sum := sha256.Sum256(data)

	var got, spins int64
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGUSR1)
	go func() {
		for range sigs {
			atomic.AddInt64(&got, 1)
		}
	}()
	stop := make(chan struct{})
	for i := 0; i < 2; i++ {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				v := 0
				for j := 0; j < 50000000; j++ { // no call inside: only SIGURG preempts it
					v += j ^ (v >> 3)
				}
				atomic.AddInt64(&spins, int64(v&1))
			}
		}()
	}
	go func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				syscall.Kill(os.Getpid(), syscall.SIGUSR1)
			}
		}
	}()
	time.AfterFunc(20*time.Second, func() {
		fmt.Fprintln(os.Stderr, "goupload: time limit")
		os.Exit(3)
	})

	c, err := net.Dial("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "goupload:", err)
		os.Exit(1)
	}
	wrote := 0
	for wrote < n {
		end := wrote + 256<<10
		if end > n {
			end = n
		}
		w, err := c.Write(data[wrote:end])
		wrote += w
		if err != nil {
			fmt.Fprintln(os.Stderr, "goupload: write:", err)
			os.Exit(1)
		}
	}
	c.Close()
	close(stop)
	fmt.Printf("wrote=%d sha256=%x signals=%d\n", wrote, sum, atomic.LoadInt64(&got))
}
