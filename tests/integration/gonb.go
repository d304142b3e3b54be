// gonb: a Go client on the netpoller (non-blocking sockets, edge-triggered epoll): receives a
// stream to EOF, or sends BYTES, and prints what it moved, its FNV-1a 64 (as itest.h's), the
// time from the connect to the end and the process's CPU time.
//
//	gonb recv HOST:PORT
//	gonb send HOST:PORT BYTES
//	gonb dial HOST:PORT N      (N connections at once, each on its goroutine)
//	gonb serve PORTFILE N      (an echo server on 127.0.0.1: its port to PORTFILE; ends when
//	                           N connections came and went, or after 20 s)
//
// Prints "bytes=N fnv=HEX elapsed_ns=NS cpu_ns=NS"; dial prints "dialled=N elapsed_ns=NS
// cpu_ns=NS", the time until the last connection completed; serve prints "accepted=N
// first_ms=MS last_ms=MS other_ms=MS cpu_ms=MS", its accepts' times from its start and the
// first accept of a client from 127.0.0.2 (-1: none).
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
		fmt.Fprintln(os.Stderr, "usage: gonb recv|send|dial|serve ... (see its header)")
		os.Exit(2)
	}
	c0 := cpuNs()
	t0 := time.Now()
	if os.Args[1] == "dial" {
		dial(os.Args[2], os.Args[3], c0, t0)
		return
	}
	if os.Args[1] == "serve" {
		serve(os.Args[2], os.Args[3], c0, t0)
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

func serve(portFile, count string, c0 int64, t0 time.Time) {
	n, _ := strconv.Atoi(count)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gonb:", err)
		os.Exit(1)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	os.WriteFile(portFile+".tmp", []byte(port), 0o644)
	os.Rename(portFile+".tmp", portFile)
	done := make(chan bool, n)
	at := make([]int64, 0, n)
	other := int64(-1)
	time.AfterFunc(20*time.Second, func() { ln.Close() })
	for len(at) < n {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		at = append(at, time.Since(t0).Milliseconds())
		if other < 0 && c.RemoteAddr().(*net.TCPAddr).IP.String() == "127.0.0.2" {
			other = at[len(at)-1]
		}
		go func(c net.Conn) {
			io.Copy(c, c)
			c.Close()
			done <- true
		}(c)
	}
	for range at {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
		}
	}
	first, last := int64(-1), int64(-1)
	if len(at) > 0 {
		first, last = at[0], at[len(at)-1]
	}
	fmt.Printf("accepted=%d first_ms=%d last_ms=%d other_ms=%d cpu_ms=%d\n", len(at), first,
		last, other, (cpuNs()-c0)/1000000)
}
