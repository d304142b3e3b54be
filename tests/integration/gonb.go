// gonb: a Go client on the netpoller (non-blocking sockets, edge-triggered epoll): receives a
// stream to EOF, or sends BYTES, and prints what it moved, its FNV-1a 64 (as itest.h's), the
// time from the connect to the end and the process's CPU time.
//
//	gonb recv HOST:PORT
//	gonb send HOST:PORT BYTES
//	gonb dial HOST:PORT N      (N connections at once, each on its goroutine)
//
// Prints "bytes=N fnv=HEX elapsed_ns=NS cpu_ns=NS"; dial prints "dialled=N elapsed_ns=NS
// cpu_ns=NS", the time until the last connection completed.
package main

import (
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

func cpuNs() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func main() {
	if len(os.Args) < 3 || (os.Args[1] == "send" && len(os.Args) < 4) {
		fmt.Fprintln(os.Stderr, "usage: gonb recv HOST:PORT | gonb send HOST:PORT BYTES")
		os.Exit(2)
	}
	c0 := cpuNs()
	t0 := time.Now()
	if os.Args[1] == "dial" {
		dial(os.Args[2], os.Args[3], c0, t0)
		return
	}
	conn, err := net.Dial("tcp", os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gonb:", err)
		os.Exit(1)
	}
	h := fnv.New64a()
	var n int64
	if os.Args[1] == "recv" {
		n, err = io.Copy(h, conn)
	} else {
		total, _ := strconv.ParseInt(os.Args[3], 10, 64)
		buf := make([]byte, 256*1024)
		x := uint64(0x9E3779B97F4A7C15)
		for n < total && err == nil {
			k := int64(len(buf))
			if total-n < k {
				k = total - n
			}
			for i := int64(0); i < k; i++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				buf[i] = byte(x >> 24)
			}
			h.Write(buf[:k])
			var w int
			w, err = conn.Write(buf[:k])
			n += int64(w)
		}
		conn.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gonb:", err)
		os.Exit(1)
	}
	fmt.Printf("bytes=%d fnv=%016x elapsed_ns=%d cpu_ns=%d\n", n, h.Sum64(),
		time.Since(t0).Nanoseconds(), cpuNs()-c0)
}

func dial(addr, count string, c0 int64, t0 time.Time) {
	n, _ := strconv.Atoi(count)
	done := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err == nil {
				defer c.Close()
			}
			done <- err
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "gonb:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("dialled=%d elapsed_ns=%d cpu_ns=%d\n", n, time.Since(t0).Nanoseconds(),
		cpuNs()-c0)
}
