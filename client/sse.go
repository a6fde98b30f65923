package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseEvent is one Server-Sent Event: its name ("message" when the stream
// names none) and its data lines joined by "\n".
type sseEvent struct {
	name string
	data []byte
}

// errStop ends readEvents early without an error.
var errStop = errors.New("stop")

// maxEventLine bounds one line of the stream (a log chunk's JSON).
const maxEventLine = 16 << 20

// readEvents parses a text/event-stream (the WHATWG format: "field: value"
// lines, events ended by a blank line, ":" comments) and calls fn for each
// event that has data. It returns nil at the end of the stream or when fn
// returns errStop, else the first error. ev.data is only valid during fn.
func readEvents(r io.Reader, fn func(sseEvent) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var ev sseEvent
	var data bytes.Buffer
	hasData := false
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte{'\r'})
		if len(line) == 0 {
			if hasData {
				if ev.name == "" {
					ev.name = "message"
				}
				ev.data = data.Bytes()
				if err := fn(ev); err != nil {
					return stopOK(err)
				}
			}
			ev, hasData = sseEvent{}, false
			data.Reset()
			continue
		}
		field, value := splitField(line)
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read event stream: %w", err)
	}
	return nil
}

func stopOK(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// splitField splits "field: value" (one optional space after the colon).
// A comment line (":...") has an empty field.
func splitField(line []byte) (field, value []byte) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return line, nil
	}
	v := line[i+1:]
	if len(v) > 0 && v[0] == ' ' {
		v = v[1:]
	}
	return line[:i], v
}
