package main

// The control endpoint: HTTP on a unix socket of its own, JSON in and out, so a test in another
// process (and language) can drive the proxy.
//
//	GET  /faults   → 200 {"faults": [faultView…], "calls": {"forwarded": n, "faulted": n,
//	                "byMethod": {"/runtime.v1.RuntimeService/Status": {"forwarded": n, "faulted": n}, …}}}
//	POST /faults   {"methods": [selector…], "fault": "hang"|"delay"|"fail"|"garble"|"clear",
//	                "delayMs": n (delay only), "code": name or number (fail only),
//	                "message": text (fail only; optional),
//	                "userAgent": the start of the callers' user-agent (optional; not with clear)}
//	               → 200 {"faults": [...], "ended": [endedView…], "calls": {...}}
//	               → 400 {"errors": ["key: value must be rule", …]}, one per problem; nothing changes
//
// `clear` with no methods clears every fault. Each accepted command is logged once; a refused
// one is logged with its problems.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// maxCommandBytes bounds a command's body; a real one is under a hundred bytes.
const maxCommandBytes = 64 * 1024

// maxUserAgentBytes bounds a command's userAgent; a real one is a library's name.
const maxUserAgentBytes = 256

type command struct {
	Methods []string        `json:"methods"`
	Fault   string          `json:"fault"`
	DelayMs json.RawMessage `json:"delayMs"`
	Code    json.RawMessage `json:"code"`
	Message *string         `json:"message"`
	// UserAgent narrows the fault to callers whose user-agent starts with it.
	UserAgent *string `json:"userAgent"`
}

func controlHandler(p *proxy, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"faults": p.faults.snapshot(), "calls": p.counts()})
	})
	mux.HandleFunc("POST /faults", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxCommandBytes+1))
		if err == nil && len(body) > maxCommandBytes {
			err = fmt.Errorf("body: %d bytes or more must be at most %d", len(body), maxCommandBytes)
		}
		var problems []error
		var selectors []string
		var kind string
		var spec faultSpec
		if err != nil {
			problems = []error{err}
		} else {
			kind, selectors, spec, problems = parseCommand(body)
		}
		if len(problems) > 0 {
			texts := make([]string, len(problems))
			for i, p := range problems {
				texts[i] = p.Error()
			}
			log.Warn("Command refused", "errors", texts)
			writeJSON(w, http.StatusBadRequest, map[string]any{"errors": texts})
			return
		}
		var ended []endedView
		if kind == "clear" {
			ended = p.faults.clear(selectors, "cleared")
			log.Info("Command", "fault", kind, "selectors", selectors, "ended", len(ended))
		} else {
			ended = p.faults.set(selectors, spec, time.Now())
			log.Info("Command", "fault", kind, "selectors", selectors, "delayMs", spec.delay.Milliseconds(), "code", codeField(spec), "message", spec.message, "userAgent", spec.userAgent, "ended", len(ended))
		}
		writeJSON(w, http.StatusOK, map[string]any{"faults": p.faults.snapshot(), "ended": ended, "calls": p.counts()})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"errors": []string{fmt.Sprintf("path: %s %s must be GET /faults or POST /faults", r.Method, r.URL.Path)}})
	})
	return mux
}

func codeField(spec faultSpec) string {
	if spec.kind != faultFail {
		return ""
	}
	return statusName(spec.code)
}

func (p *proxy) counts() countsView {
	return p.calls.view()
}

// parseCommand validates a command whole, returning every problem at once.
func parseCommand(body []byte) (string, []string, faultSpec, []error) {
	var cmd command
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cmd); err != nil {
		return "", nil, faultSpec{}, []error{fmt.Errorf("body: %s must be a JSON command object", strings.TrimPrefix(err.Error(), "json: "))}
	}
	var problems []error
	selectors, selectorProblems := expandSelectors(cmd.Methods)
	problems = append(problems, selectorProblems...)
	kind := faultKind(cmd.Fault)
	spec := faultSpec{kind: kind}
	switch kind {
	case faultHang, faultDelay, faultFail, faultGarble, "clear":
	default:
		quoted, _ := json.Marshal(cmd.Fault)
		problems = append(problems, fmt.Errorf("fault: %s must be one of hang, delay, fail, garble, clear", quoted))
	}
	if kind != "clear" && len(cmd.Methods) == 0 {
		problems = append(problems, errors.New("methods: [] must name at least one method (only clear may name none: every fault)"))
	}
	if kind == faultDelay {
		var ms int64
		if cmd.DelayMs == nil || json.Unmarshal(cmd.DelayMs, &ms) != nil || ms < 1 || ms > maxDelay.Milliseconds() {
			problems = append(problems, fmt.Errorf("delayMs: %s must be a whole number of milliseconds from 1 to %d", rawOrMissing(cmd.DelayMs), maxDelay.Milliseconds()))
		}
		spec.delay = time.Duration(ms) * time.Millisecond
	} else if cmd.DelayMs != nil {
		problems = append(problems, fmt.Errorf("delayMs: %s must be given only with fault delay", cmd.DelayMs))
	}
	if kind == faultFail {
		if cmd.Code == nil {
			problems = append(problems, errors.New("code: (missing) must be given with fault fail"))
		} else if code, err := parseErrorCode(cmd.Code); err != nil {
			problems = append(problems, err)
		} else {
			spec.code = code
		}
		spec.message = "cri-fault-proxy: injected " + statusName(spec.code)
		if cmd.Message != nil {
			spec.message = *cmd.Message
		}
	} else {
		if cmd.Code != nil {
			problems = append(problems, fmt.Errorf("code: %s must be given only with fault fail", cmd.Code))
		}
		if cmd.Message != nil {
			quoted, _ := json.Marshal(*cmd.Message)
			problems = append(problems, fmt.Errorf("message: %s must be given only with fault fail", quoted))
		}
	}
	if cmd.UserAgent != nil {
		quoted, _ := json.Marshal(*cmd.UserAgent)
		switch {
		case kind == "clear":
			problems = append(problems, fmt.Errorf("userAgent: %s must not be given with clear (clear ends a selector's fault whoever it applies to)", quoted))
		case *cmd.UserAgent == "" || len(*cmd.UserAgent) > maxUserAgentBytes:
			problems = append(problems, fmt.Errorf("userAgent: %s must be the start of a user-agent, 1 to %d bytes", quoted, maxUserAgentBytes))
		default:
			spec.userAgent = *cmd.UserAgent
		}
	}
	return string(kind), selectors, spec, problems
}

func rawOrMissing(raw json.RawMessage) string {
	if raw == nil {
		return "(missing)"
	}
	return string(raw)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
