// gotrap: a Go program for the injector's tests and benchmark (issue 21): under the minimal blob
// its rt_sigaction and rt_sigprocmask calls, getppid and UDP sendto are trapped and made by the
// blob's SIGSYS handler. It must run its GC, goroutines and SIGURG preemption and receive 30
// SIGUSR1 through os/signal without dying of SIGSYS. With arguments, it then runs them as a
// command (os/exec) and prints its output; with -threadexec PROG ARG..., it only execs PROG
// from a thread that is not the main one. Prints key=value words.
package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var sink [][]byte

// The main goroutine keeps the main thread: a goroutine that locks a thread of its own then
// runs on another one (-threadexec execs from there).
func init() { runtime.LockOSThread() }

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-threadexec" {
		// execve from a thread that is not the group's leader: the kernel reports the exec
		// under the leader's id
		done := make(chan error)
		go func() {
			runtime.LockOSThread()
			fmt.Printf("gotrap leader=%v\n", syscall.Gettid() == os.Getpid())
			done <- syscall.Exec(os.Args[2], os.Args[2:], os.Environ())
		}()
		fmt.Println("gotrap exec failed:", <-done)
		os.Exit(3)
	}
	// goroutines and the GC
	var wg sync.WaitGroup
	var sum int64
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b := make([]byte, 64<<10)
			b[i] = byte(i)
			atomic.AddInt64(&sum, int64(len(b)))
		}(i)
	}
	wg.Wait()
	for i := 0; i < 200; i++ {
		sink = append(sink, make([]byte, 256<<10))
		if len(sink) > 16 {
			sink = sink[:0]
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)

	// SIGURG preemption: with one P, main runs again only if the spinning goroutine is
	// preempted asynchronously (it makes no call the scheduler could stop it at)
	prev := runtime.GOMAXPROCS(1)
	var stop int32
	var spins int64
	done := make(chan struct{})
	go func() {
		n := int64(0)
		for atomic.LoadInt32(&stop) == 0 {
			n++
		}
		spins = n
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	atomic.StoreInt32(&stop, 1)
	<-done
	runtime.GOMAXPROCS(prev)

	// os/signal: 30 SIGUSR1, each received before the next is sent
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	got := 0
	for i := 0; i < 30; i++ {
		syscall.Kill(os.Getpid(), syscall.SIGUSR1)
		select {
		case <-ch:
			got++
		case <-time.After(5 * time.Second):
		}
	}

	// trapped calls the program makes on purpose
	ppid := 0
	for i := 0; i < 1000; i++ {
		if syscall.Getppid() > 0 {
			ppid++
		}
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	udp := 0
	if err == nil {
		s, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		buf := make([]byte, 16)
		for i := 0; i < 100 && s != nil; i++ {
			if _, err := s.WriteTo([]byte("x"), pc.LocalAddr()); err == nil {
				pc.SetReadDeadline(time.Now().Add(2 * time.Second))
				if _, _, err := pc.ReadFrom(buf); err == nil {
					udp++
				}
			}
		}
	}
	// with an argument: run it (os/exec: a vfork'd child whose execve is trapped)
	execd := "none"
	if len(os.Args) > 1 {
		out, err := exec.Command(os.Args[1], os.Args[2:]...).Output()
		if err != nil {
			execd = "error:" + err.Error()
		} else {
			execd = "ok:" + string(out[:len(out)-min(1, len(out))])
		}
	}
	fmt.Printf("gotrap exec=%q\n", execd)
	fmt.Printf("gotrap goroutines=100 bytes=%d gc=%d preempted=%d sigusr1=%d ppid=%d udp=%d\n",
		sum, ms.NumGC, map[bool]int{true: 1, false: 0}[spins > 0], got, ppid, udp)
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}
