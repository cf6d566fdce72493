package streamwrap

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/streamwrap/repair"
)

type msDuration = time.Duration
type timeNow = time.Time

func msDur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
func now() time.Time               { return time.Now() }
func sleepMs(ms int64)             { time.Sleep(msDur(ms)) }

// decodeEntitiesValue runs decodeHtmlEntitiesInObject on a JSON value.
func decodeEntitiesValue(t *testing.T, v json.RawMessage) []byte {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		t.Fatal(err)
	}
	return repair.DecodeEntitiesInJSON(nil, v)
}

// wait sleeps until d after f.start, or until the context ends; it fires
// the provider-activity hook at the scheduled activity times.
func (f *idleFake) wait(d time.Duration) bool {
	act := llm.ActivityFunc(f.ctx)
	for {
		el := time.Since(f.start)
		next := d
		for len(f.activity) > 0 && f.activity[0] <= el {
			if act != nil {
				act()
			}
			f.activity = f.activity[1:]
		}
		if len(f.activity) > 0 && f.activity[0] < next {
			next = f.activity[0]
		}
		if el >= d {
			return true
		}
		tm := time.NewTimer(next - el)
		select {
		case <-f.ctx.Done():
			tm.Stop()
			f.err = context.Cause(f.ctx)
			return false
		case <-tm.C:
			// Scheduling slack: a timer due earlier (the idle timer) may not
			// have run yet on a loaded machine; give it the chance first.
			time.Sleep(2 * time.Millisecond)
			if f.ctx.Err() != nil {
				f.err = context.Cause(f.ctx)
				return false
			}
		}
	}
}

func (f *idleFake) Next() bool {
	if f.err != nil {
		return false
	}
	if f.blockAll {
		<-f.ctx.Done()
		f.err = context.Cause(f.ctx)
		return false
	}
	if f.i >= len(f.chunks) {
		return false
	}
	at := f.eventAt
	if f.gap > 0 {
		at = time.Since(f.start) + f.gap
	}
	if at > 0 && !f.wait(at) {
		return false
	}
	f.ev = llm.Event{Type: llm.EventTextDelta, Delta: []byte(f.chunks[f.i])}
	f.i++
	return true
}

func (f *idleFake) Event() *llm.Event     { return &f.ev }
func (f *idleFake) Message() *llm.Message { return &f.msg }
func (f *idleFake) Err() error            { return f.err }
func (f *idleFake) Close() error          { return nil }
