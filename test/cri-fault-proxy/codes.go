package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
)

// statusNames are gRPC's canonical status names (the spec's, and @grpc/grpc-js's `status`
// enum): the control endpoint takes and shows codes by these names, so a TypeScript test can
// write the code it will assert on.
var statusNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// statusName is the canonical name of a code.
func statusName(c codes.Code) string {
	if int(c) < len(statusNames) {
		return statusNames[c]
	}
	return fmt.Sprintf("CODE_%d", uint32(c))
}

// parseErrorCode reads a `code` field: a status name or its number, never OK.
func parseErrorCode(raw json.RawMessage) (codes.Code, error) {
	rule := fmt.Errorf("code: %s must be a gRPC status name (CANCELLED to UNAUTHENTICATED) or its number (1 to 16)", string(raw))
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		for i, known := range statusNames {
			if i > 0 && strings.EqualFold(name, known) {
				return codes.Code(i), nil
			}
		}
		return 0, rule
	}
	var number int
	if err := json.Unmarshal(raw, &number); err == nil && number >= 1 && number < len(statusNames) {
		return codes.Code(number), nil
	}
	return 0, rule
}
