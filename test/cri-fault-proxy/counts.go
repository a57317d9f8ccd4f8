package main

import (
	"sort"
	"sync"
)

// maxCountedMethods bounds the per-method counts: the CRI has about fifty methods, and a caller
// may send any name; names past the bound are counted under otherMethods.
const maxCountedMethods = 128

const otherMethods = "(other)"

// methodCount is what the calls of one method met.
type methodCount struct {
	Forwarded int64 `json:"forwarded"`
	Faulted   int64 `json:"faulted"`
}

// callCounts counts every call, by method, as forwarded untouched or met by a fault.
type callCounts struct {
	mu       sync.Mutex
	total    methodCount
	byMethod map[string]*methodCount
}

func newCallCounts() *callCounts {
	return &callCounts{byMethod: map[string]*methodCount{}}
}

func (c *callCounts) add(method string, faulted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.byMethod[method]
	if m == nil {
		if len(c.byMethod) >= maxCountedMethods {
			method = otherMethods
		}
		if m = c.byMethod[method]; m == nil {
			m = &methodCount{}
			c.byMethod[method] = m
		}
	}
	if faulted {
		m.Faulted++
		c.total.Faulted++
	} else {
		m.Forwarded++
		c.total.Forwarded++
	}
}

// countsView is the counts as the control endpoint shows them.
type countsView struct {
	Forwarded int64                  `json:"forwarded"`
	Faulted   int64                  `json:"faulted"`
	ByMethod  map[string]methodCount `json:"byMethod"`
}

func (c *callCounts) view() countsView {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := countsView{Forwarded: c.total.Forwarded, Faulted: c.total.Faulted, ByMethod: make(map[string]methodCount, len(c.byMethod))}
	names := make([]string, 0, len(c.byMethod))
	for n := range c.byMethod {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v.ByMethod[n] = *c.byMethod[n]
	}
	return v
}
