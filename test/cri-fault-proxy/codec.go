package main

import "fmt"

// frame is one gRPC message as bytes on the wire, never decoded: the proxy forwards what it
// is given, so a field it does not know (a newer CRI, an ImageService call) passes unchanged.
type frame struct {
	payload []byte
}

// rawCodec hands gRPC the bytes of a frame as they are. Its name is "proto" so that the
// content-subtype upstream sees is the one a CRI client sends.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("raw codec: %T must be a *frame", v)
	}
	return f.payload, nil
}

// Unmarshal copies: gRPC frees the buffer it passes in once this returns.
func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("raw codec: %T must be a *frame", v)
	}
	f.payload = append([]byte(nil), data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }
