package main

// The fault table: which fault is in force for which gRPC method, and what each one did.
//
// | fault  | a call that starts while it is in force                                        |
// |--------|--------------------------------------------------------------------------------|
// | hang   | is held, never forwarded, until the fault ends (then forwarded as usual) or    |
// |        | the caller's deadline or cancel ends it                                        |
// | delay  | is forwarded at once; its answer (messages and status) leaves no sooner than D |
// |        | after the call began                                                           |
// | fail   | is answered with the given status code and message, never forwarded            |
// | garble | is forwarded; every answer message leaves with garblePrefix in front            |
// | (none) | is forwarded unchanged                                                         |
//
// A fault ends when it is cleared, replaced by another fault on the same selector, or the proxy
// stops. A call looks its fault up once, when it starts: a command changes only calls that start
// after it, except that a hang's end releases the calls it holds.
//
// Selectors: a full method name (/runtime.v1.RuntimeService/ListContainers), a service
// (/runtime.v1.RuntimeService/*), every method (*), or a named set (setNames). The most specific
// selector in force wins: the method's own, then its service's, then *.
//
// A fault may also name a caller: the start of its user-agent (`nodepulse/` for nodepulse's
// client, `grpc-go/` for the kubelet's). It then applies to that caller's calls alone;
// any other caller's call is forwarded as if no fault were in force (and is not counted as
// faulted). So a node's kubelet and its agent, on one socket, can meet different answers: an
// answer only the agent's decoder is given garbled, say.
//
// Bounded: the table holds at most one fault per selector, and selectors are the commands'; calls
// are counted, never kept.

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
)

type faultKind string

const (
	faultHang   faultKind = "hang"
	faultDelay  faultKind = "delay"
	faultFail   faultKind = "fail"
	faultGarble faultKind = "garble"
)

// garblePrefix goes in front of every answer message of a garbled call. Its first byte is the
// tag of field 1 (the repeated `items` / `containers` of both list answers, and the first field
// of every answer the agent reads) with wire type 7, which protobuf does not define. nodepulse's
// lean decoder (src/cri/lean-decode.ts) reads that tag, finds no field 1 of wire type 2 and skips
// it by its wire type, and wire type 7 cannot be skipped: it throws "invalid wire type 7 at byte
// 1". A plain wrong wire type (0, say) would not do: the lean decoder skips a known field of an
// unexpected wire type, and would read an empty list. The varint 2^32-1 after it is for decoders
// that do not check the wire type of a message field (protobufjs, under proto-loader, reads it
// as the embedded message's length): it is longer than any answer, so they fail too, whatever the
// answer held, instead of reading a garbage item out of the real bytes.
var garblePrefix = []byte{1<<3 | 7, 0xff, 0xff, 0xff, 0xff, 0x0f}

// setNames are the named sets a command may give as a selector.
var setNames = map[string][]string{
	"lists":  {"/runtime.v1.RuntimeService/ListPodSandbox", "/runtime.v1.RuntimeService/ListContainers"},
	"status": {"/runtime.v1.RuntimeService/Status"},
	"images": {"/runtime.v1.ImageService/*"},
}

var (
	methodPattern  = regexp.MustCompile(`^/[A-Za-z_][\w.]*/[A-Za-z_]\w*$`)
	servicePattern = regexp.MustCompile(`^/[A-Za-z_][\w.]*/\*$`)
)

// maxDelay bounds a delay: a test that asks for more has a mistake in it.
const maxDelay = time.Hour

// faultSpec is a fault as a command asks for it.
type faultSpec struct {
	kind    faultKind
	delay   time.Duration
	code    codes.Code
	message string
	// userAgent: the callers it applies to, by the start of their user-agent ("" = every caller).
	userAgent string
}

// fault is a faultSpec in force on one selector.
type fault struct {
	faultSpec
	selector string
	since    time.Time
	// released is closed when the fault ends: calls held by a hang go on.
	released chan struct{}
	applied  atomic.Int64
	held     atomic.Int64
	// announced is set by the first call the fault applies to, which logs it once.
	announced atomic.Bool
}

// faultView is a fault as GET /faults shows it.
type faultView struct {
	Selector string `json:"selector"`
	Fault    string `json:"fault"`
	DelayMs  *int64 `json:"delayMs,omitempty"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message,omitempty"`
	// UserAgent: the callers the fault applies to ("" = every caller).
	UserAgent string `json:"userAgent,omitempty"`
	Since     string `json:"since"`
	// Applied counts the calls the fault applied to, Held the calls a hang holds now.
	Applied int64 `json:"applied"`
	Held    int64 `json:"held"`
}

// endedView is a fault that a command or the proxy's stop ended.
type endedView struct {
	Selector string `json:"selector"`
	Fault    string `json:"fault"`
	Applied  int64  `json:"applied"`
	// Released counts the held calls that went on when the fault ended.
	Released int64 `json:"released"`
}

type faultTable struct {
	log *slog.Logger
	mu  sync.Mutex
	in  map[string]*fault
}

func newFaultTable(log *slog.Logger) *faultTable {
	return &faultTable{log: log, in: map[string]*fault{}}
}

// expandSelectors checks a command's methods and expands named sets, in order, without repeats.
func expandSelectors(methods []string) ([]string, []error) {
	var out []string
	var problems []error
	seen := map[string]bool{}
	for i, m := range methods {
		names, isSet := setNames[m]
		switch {
		case isSet:
		case m == "*", methodPattern.MatchString(m), servicePattern.MatchString(m):
			names = []string{m}
		default:
			quoted, _ := json.Marshal(m)
			problems = append(problems, fmt.Errorf("methods[%d]: %s must be a full method name (/package.Service/Method), a service (/package.Service/*), \"*\" or a set (%s)", i, quoted, strings.Join(sortedSetNames(), ", ")))
			continue
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, problems
}

func sortedSetNames() []string {
	names := make([]string, 0, len(setNames))
	for n := range setNames {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// lookup returns the fault a call of `method` from a caller whose user-agent is `userAgent`
// starts under (nil: none), and counts it.
func (t *faultTable) lookup(method, userAgent string) *fault {
	t.mu.Lock()
	f := t.in[method]
	if f == nil {
		if at := strings.LastIndex(method, "/"); at > 0 {
			f = t.in[method[:at+1]+"*"]
		}
	}
	if f == nil {
		f = t.in["*"]
	}
	t.mu.Unlock()
	if f == nil || !strings.HasPrefix(userAgent, f.userAgent) {
		return nil
	}
	f.applied.Add(1)
	if f.announced.CompareAndSwap(false, true) {
		t.log.Info("Fault applied", "selector", f.selector, "fault", string(f.kind), "method", method)
	}
	return f
}

// set puts spec in force on every selector, ending whatever was there.
func (t *faultTable) set(selectors []string, spec faultSpec, now time.Time) []endedView {
	t.mu.Lock()
	defer t.mu.Unlock()
	ended := []endedView{}
	for _, s := range selectors {
		if old := t.in[s]; old != nil {
			ended = append(ended, t.endLocked(old, "replaced"))
		}
		t.in[s] = &fault{faultSpec: spec, selector: s, since: now, released: make(chan struct{})}
	}
	return ended
}

// clear ends the faults on the given selectors, or every fault when there are none.
func (t *faultTable) clear(selectors []string, reason string) []endedView {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(selectors) == 0 {
		for s := range t.in {
			selectors = append(selectors, s)
		}
		sort.Strings(selectors)
	}
	ended := []endedView{}
	for _, s := range selectors {
		if f := t.in[s]; f != nil {
			ended = append(ended, t.endLocked(f, reason))
		}
	}
	return ended
}

func (t *faultTable) endLocked(f *fault, reason string) endedView {
	delete(t.in, f.selector)
	released := f.held.Load()
	close(f.released)
	view := endedView{Selector: f.selector, Fault: string(f.kind), Applied: f.applied.Load(), Released: released}
	t.log.Info("Fault ended", "selector", view.Selector, "fault", view.Fault, "applied", view.Applied, "released", view.Released, "reason", reason)
	return view
}

// snapshot lists the faults in force, by selector.
func (t *faultTable) snapshot() []faultView {
	t.mu.Lock()
	defer t.mu.Unlock()
	views := make([]faultView, 0, len(t.in))
	for _, f := range t.in {
		v := faultView{
			Selector:  f.selector,
			Fault:     string(f.kind),
			UserAgent: f.userAgent,
			Since:     f.since.UTC().Format(time.RFC3339Nano),
			Applied:   f.applied.Load(),
			Held:      f.held.Load(),
		}
		switch f.kind {
		case faultDelay:
			ms := f.delay.Milliseconds()
			v.DelayMs = &ms
		case faultFail:
			v.Code = statusName(f.code)
			v.Message = f.message
		}
		views = append(views, v)
	}
	sort.Slice(views, func(i, j int) bool { return views[i].Selector < views[j].Selector })
	return views
}
