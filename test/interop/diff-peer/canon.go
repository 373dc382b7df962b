package main

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// canonProto turns a message into generic JSON: protobuf JSON (lowerCamelCase names, 64-bit
// integers as strings, enums by name, default values left out) decoded with exact numbers,
// so that printing it again sorts every object's keys.
func canonProto(m proto.Message) any {
	buf, err := protojson.Marshal(m)
	if err != nil {
		fail("cannot encode %T: %v", m, err)
	}
	return decodeJSON(buf)
}

func decodeJSON(buf []byte) any {
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		fail("cannot decode JSON %q: %v", buf, err)
	}
	return v
}

// canonLine encodes v as one line: object keys sorted, no HTML escaping, no spaces.
func canonLine(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fail("cannot encode output line: %v", err)
	}
	return b.Bytes() // Encode ends it with a newline
}

var stdoutMu sync.Mutex

// emit prints v as one canonical line on stdout.
func emit(v any) {
	line := canonLine(v)
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	os.Stdout.Write(line)
}

// unmarshalInto decodes protobuf JSON into m, failing the program on bad input.
func unmarshalInto(raw json.RawMessage, m proto.Message) {
	if isNull(raw) {
		return
	}
	if err := protojson.Unmarshal(raw, m); err != nil {
		fail("bad protobuf JSON for %T: %v (%s)", m, err, raw)
	}
}

// isNull says whether a JSON value is absent.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
