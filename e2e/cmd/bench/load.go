package main

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// loadAverage is the machine's 1-minute load average (/proc/loadavg's first field; proc(5)), 0 where it cannot be
// read: the many-at-once sets share the machine with whatever else runs on it, and their times mean little
// without it.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), " ")
	f, err := strconv.ParseFloat(first, 64)
	if err != nil {
		return 0
	}
	return f
}

// watchLoad samples the load average every second until the function it returns is called, which returns the
// highest sample.
func watchLoad() func() float64 {
	var mu sync.Mutex
	highest := loadAverage()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l := loadAverage()
				mu.Lock()
				highest = max(highest, l)
				mu.Unlock()
			}
		}
	}()
	return func() float64 {
		close(done)
		mu.Lock()
		defer mu.Unlock()
		return highest
	}
}
