package cachesim

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// conv builds requests of a growing conversation: a system block then
// messages, each message a block with its own hash.
type conv struct {
	ns     uint64
	blocks []Block
}

func (c *conv) sys(tokens int, bp bool) *conv {
	c.blocks = append(c.blocks, Block{Hash: 1, Tokens: tokens, Breakpoint: bp, Label: -1})
	return c
}

func (c *conv) msg(hash uint64, tokens int) *conv {
	c.blocks = append(c.blocks, Block{Hash: hash, Tokens: tokens, Label: len(c.blocks) - 1})
	return c
}

// req returns the request at time at, with a breakpoint on the last block
// (as OpenClaw marks the last user message) in addition to the marked ones.
func (c *conv) req(at time.Duration, lastBP bool) *Request {
	b := append([]Block(nil), c.blocks...)
	if lastBP {
		b[len(b)-1].Breakpoint = true
	}
	return &Request{Time: t0.Add(at), Namespace: c.ns, Blocks: b}
}

func want(t *testing.T, name string, got Result, read, write, uncached int, reason Reason) {
	t.Helper()
	if got.Read != read || got.Write != write || got.Uncached != uncached || got.Reason != reason {
		t.Errorf("%s: got read=%d write=%d uncached=%d reason=%v; want %d/%d/%d %v (%+v)",
			name, got.Read, got.Write, got.Uncached, got.Reason, read, write, uncached, reason, got)
	}
	if got.Read+got.Write+got.Uncached != got.Total {
		t.Errorf("%s: read+write+uncached=%d != total %d", name, got.Read+got.Write+got.Uncached, got.Total)
	}
}

func TestAnthropicToolLoop(t *testing.T) {
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c := (&conv{ns: 7}).sys(2000, true).msg(10, 100)
	want(t, "cold", s.Simulate(c.req(0, true)), 0, 2100, 0, ReasonCold)
	c.msg(11, 50).msg(12, 400)
	want(t, "loop", s.Simulate(c.req(5*time.Second, true)), 2100, 450, 0, ReasonHit)
	c.msg(13, 30).msg(14, 20)
	want(t, "loop2", s.Simulate(c.req(10*time.Second, true)), 2550, 50, 0, ReasonHit)
}

func TestAnthropicTTLExpiryAndRefresh(t *testing.T) {
	r := RulesFor(ProviderAnthropic, "claude-sonnet-4-5")
	// Refreshed on every hit: four calls 4 minutes apart all hit.
	s := New(r, Options{})
	c := (&conv{ns: 1}).sys(2000, true).msg(10, 100)
	s.Simulate(c.req(0, true))
	for i := 1; i <= 4; i++ {
		c.msg(uint64(100+i), 10)
		got := s.Simulate(c.req(time.Duration(i)*4*time.Minute, true))
		if got.Reason != ReasonHit || got.Read != 2100+10*(i-1) {
			t.Fatalf("call %d after 4 min: %+v, want a hit of %d", i, got, 2100+10*(i-1))
		}
	}
	// A gap longer than 5 minutes expires everything, the system entry too.
	c.msg(200, 10)
	got := s.Simulate(c.req(16*time.Minute+5*time.Minute+time.Second, true))
	want(t, "expired", got, 0, got.Total, 0, ReasonExpired)
	if got.Gap != 5*time.Minute+time.Second {
		t.Errorf("gap = %v, want 5m1s", got.Gap)
	}
	if got.Lost != 2140 {
		t.Errorf("lost = %d, want 2140", got.Lost)
	}
	// Exactly at the TTL is still alive.
	c.msg(201, 10)
	if got := s.Simulate(c.req(26*time.Minute+time.Second, true)); got.Reason != ReasonHit {
		t.Errorf("at exactly 5 minutes: %+v, want a hit", got)
	}
}

func TestAnthropicOneHourTTL(t *testing.T) {
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c := &conv{ns: 1}
	c.blocks = append(c.blocks, Block{Hash: 1, Tokens: 3000, Breakpoint: true, LongTTL: true, Label: -1})
	c.msg(10, 100)
	got := s.Simulate(c.req(0, true))
	if got.Write != 3100 || got.Write1h != 3000 {
		t.Fatalf("first write: %+v, want 3100 written, 3000 of them 1h", got)
	}
	// 30 minutes later: the 5-minute message entry is gone, the 1-hour
	// system entry is alive.
	c.msg(11, 100)
	got = s.Simulate(c.req(30*time.Minute, true))
	want(t, "30min", got, 3000, 200, 0, ReasonExpired)
	// 61 minutes after that: everything expired.
	c.msg(12, 100)
	got = s.Simulate(c.req(91*time.Minute+time.Second, true))
	want(t, "91min", got, 0, 3300, 0, ReasonExpired)

	// Retention "long" makes every breakpoint a 1-hour one, billed as such.
	s = New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5").WithRetention("long"), Options{})
	c = (&conv{ns: 1}).sys(3000, true).msg(10, 100)
	s.Simulate(c.req(0, true))
	c.msg(11, 10)
	got = s.Simulate(c.req(50*time.Minute, true))
	want(t, "long retention", got, 3100, 10, 0, ReasonHit)
	if got.Write1h != 10 {
		t.Errorf("write1h = %d, want 10", got.Write1h)
	}
}

func TestAnthropicTTLOrder(t *testing.T) {
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	blocks := []Block{
		{Hash: 1, Tokens: 3000, Breakpoint: true},
		{Hash: 2, Tokens: 100, Breakpoint: true, LongTTL: true},
	}
	got := s.Simulate(&Request{Time: t0, Blocks: blocks})
	want(t, "5m then 1h", got, 0, 0, 3100, ReasonTTLOrder)
	blocks[0].LongTTL, blocks[1].LongTTL = true, false
	got = s.Simulate(&Request{Time: t0, Blocks: blocks})
	want(t, "1h then 5m", got, 0, 3100, 0, ReasonCold)
	if got.Write1h != 3000 {
		t.Errorf("write1h %d, want 3000", got.Write1h)
	}
}

func TestAnthropicMinimumPerModel(t *testing.T) {
	cases := []struct {
		model  string
		min    int
		prompt int
		cached bool
	}{
		{"claude-sonnet-4-5-20250929", 1024, 1023, false},
		{"claude-sonnet-4-5-20250929", 1024, 1024, true},
		{"claude-opus-4-6", 4096, 4095, false},
		{"claude-opus-4-6", 4096, 4096, true},
		{"claude-haiku-4-5", 4096, 3000, false},
		{"claude-3-5-haiku-latest", 2048, 2047, false},
		{"claude-3-5-haiku-latest", 2048, 2048, true},
		{"claude-opus-4-7", 2048, 2048, true},
		{"claude-opus-5", 512, 512, true},
	}
	for _, tc := range cases {
		r := RulesFor(ProviderUnknown, tc.model)
		if r.Provider != ProviderAnthropic || r.MinTokens != tc.min {
			t.Errorf("%s: rules %v min %d, want anthropic min %d", tc.model, r.Provider, r.MinTokens, tc.min)
			continue
		}
		s := New(r, Options{})
		c := (&conv{ns: 1}).sys(tc.prompt-1, false).msg(2, 1)
		got := s.Simulate(c.req(0, true))
		if tc.cached {
			want(t, tc.model, got, 0, tc.prompt, 0, ReasonCold)
		} else {
			want(t, tc.model, got, 0, 0, tc.prompt, ReasonBelowMinimum)
		}
	}
}

func TestAnthropicBreakpointOnlyAboveMinimumIsWritten(t *testing.T) {
	// System breakpoint below the minimum, last-message breakpoint above it:
	// only the second is written.
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c := (&conv{ns: 1}).sys(800, true).msg(2, 400)
	want(t, "first", s.Simulate(c.req(0, true)), 0, 1200, 0, ReasonCold)
	// Changing the message keeps nothing: the system entry was never
	// written, being below 1024 tokens.
	c.blocks[1].Hash = 3
	got := s.Simulate(c.req(time.Second, true))
	want(t, "changed", got, 0, 1200, 0, ReasonPrefixChanged)
	if got.ChangedAt != 1 || got.ChangedLabel != 0 {
		t.Errorf("changed at %d label %d, want block 1 label 0", got.ChangedAt, got.ChangedLabel)
	}
}

func TestAnthropicBreakpointLimit(t *testing.T) {
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c := (&conv{ns: 1}).sys(2000, true)
	for i := 0; i < 3; i++ {
		c.msg(uint64(10+i), 100)
		c.blocks[len(c.blocks)-1].Breakpoint = true
	}
	// Four breakpoints: accepted.
	if got := s.Simulate(c.req(0, false)); got.Reason != ReasonCold || got.Write != 2300 {
		t.Fatalf("4 breakpoints: %+v", got)
	}
	c.msg(20, 100)
	got := s.Simulate(c.req(time.Second, true))
	want(t, "5 breakpoints", got, 0, 0, 2400, ReasonBreakpointLimit)
	// No breakpoint at all: nothing cached.
	s = New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c = (&conv{ns: 1}).sys(2000, false).msg(1, 10)
	want(t, "none", s.Simulate(c.req(0, false)), 0, 0, 2010, ReasonNoBreakpoint)
}

func TestAnthropicLookbackWindow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts int
		read  int
	}{
		{"19 blocks appended", 19, 2100},
		{"20 blocks appended", 20, 2100},
		{"21 blocks appended", 21, 2000}, // only the system breakpoint is found
	} {
		s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
		c := (&conv{ns: 1}).sys(2000, true).msg(10, 100)
		s.Simulate(c.req(0, true))
		for i := 0; i < tc.parts; i++ {
			c.msg(uint64(100+i), 10)
		}
		got := s.Simulate(c.req(time.Second, true))
		if got.Read != tc.read {
			t.Errorf("%s: read %d, want %d (%+v)", tc.name, got.Read, tc.read, got)
		}
	}
	// Parts counts content blocks: one message of 21 parts is outside too.
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c := (&conv{ns: 1}).sys(2000, true).msg(10, 100)
	s.Simulate(c.req(0, true))
	c.msg(11, 50)
	c.blocks[len(c.blocks)-1].Parts = 21
	if got := s.Simulate(c.req(time.Second, true)); got.Read != 2000 {
		t.Errorf("one 21-part message: read %d, want 2000", got.Read)
	}
}

func TestAnthropicPartialHitOnOptionChange(t *testing.T) {
	// A request option block after the system prompt (thinking level):
	// changing it keeps tools+system and loses the messages.
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c := (&conv{ns: 1}).sys(2000, true)
	c.blocks = append(c.blocks, Block{Hash: 500, Tokens: 0, Label: -2})
	c.msg(10, 3000)
	s.Simulate(c.req(0, true))
	c.blocks[1].Hash = 501
	c.msg(11, 10)
	got := s.Simulate(c.req(time.Second, true))
	want(t, "option change", got, 2000, 3010, 0, ReasonPrefixChanged)
	if got.ChangedAt != 1 || got.ChangedLabel != -2 || got.Lost != 3000 {
		t.Errorf("changed at %d label %d lost %d", got.ChangedAt, got.ChangedLabel, got.Lost)
	}
}

func TestModelChange(t *testing.T) {
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c := (&conv{ns: 1}).sys(2000, true).msg(10, 100)
	s.Simulate(c.req(0, true))
	c.ns = 2
	c.msg(11, 10)
	want(t, "model", s.Simulate(c.req(time.Second, true)), 0, 2110, 0, ReasonModelChanged)
}

func TestOpenAIStepsAndMinimum(t *testing.T) {
	r := RulesFor(ProviderOpenAI, "gpt-5.1")
	if r.MinTokens != 1024 || r.Unit != 128 || r.Mode != ModePrefix {
		t.Fatalf("rules %+v", r)
	}
	for _, tc := range []struct{ shared, read int }{
		{1023, 0}, {1024, 1024}, {1151, 1024}, {1152, 1152}, {1500, 1408}, {10_000, 9984},
	} {
		s := New(r, Options{})
		c := (&conv{ns: 1}).sys(tc.shared, false).msg(2, 300)
		s.Simulate(c.req(0, false))
		c.blocks[1].Hash = 3 // the second request shares only the first block
		got := s.Simulate(c.req(time.Second, false))
		if got.Read != tc.read {
			t.Errorf("shared %d: read %d, want %d", tc.shared, got.Read, tc.read)
		}
	}
	// Below 1024 tokens nothing is cached at all.
	s := New(r, Options{})
	c := (&conv{ns: 1}).sys(1000, false)
	want(t, "small", s.Simulate(c.req(0, false)), 0, 0, 1000, ReasonBelowMinimum)
	want(t, "small again", s.Simulate(c.req(time.Second, false)), 0, 0, 1000, ReasonBelowMinimum)
	// A growing conversation reads whole steps of the previous prompt.
	s = New(r, Options{})
	c = (&conv{ns: 1}).sys(1100, false).msg(2, 200)
	got := s.Simulate(c.req(0, false))
	want(t, "cold", got, 0, 1280, 20, ReasonCold)
	c.msg(3, 200)
	want(t, "grow", s.Simulate(c.req(time.Second, false)), 1280, 128, 92, ReasonHit)
}

func TestOpenAIRetention(t *testing.T) {
	r := RulesFor(ProviderOpenAI, "gpt-5.4")
	s := New(r, Options{})
	c := (&conv{ns: 1}).sys(2048, false)
	s.Simulate(c.req(0, false))
	got := s.Simulate(c.req(6*time.Minute, false))
	if got.Reason != ReasonExpired || got.Read != 0 {
		t.Errorf("after 6 idle minutes: %+v, want expired", got)
	}
	// Kept warm every 4 minutes, it still goes within the hour.
	s = New(r, Options{})
	s.Simulate(c.req(0, false))
	var last Result
	for m := 4; m <= 64; m += 4 {
		last = s.Simulate(c.req(time.Duration(m)*time.Minute, false))
		if m <= 60 && last.Read != 2048 {
			t.Fatalf("minute %d: %+v, want a hit", m, last)
		}
	}
	if last.Reason != ReasonExpired {
		t.Errorf("minute 64: %+v, want expired by the one-hour bound", last)
	}
	// 24h retention survives a two-hour gap.
	s = New(r.WithRetention("24h"), Options{})
	s.Simulate(c.req(0, false))
	if got := s.Simulate(c.req(2*time.Hour, false)); got.Read != 2048 {
		t.Errorf("24h retention after 2h: %+v", got)
	}
}

func TestGeminiImplicit(t *testing.T) {
	r := RulesFor(ProviderUnknown, "gemini-2.5-flash")
	if r.Provider != ProviderGemini || r.MinTokens != 2048 {
		t.Fatalf("rules %+v", r)
	}
	s := New(r, Options{})
	c := (&conv{ns: 1}).sys(2000, false).msg(2, 100)
	want(t, "cold", s.Simulate(c.req(0, false)), 0, 2100, 0, ReasonCold)
	c.msg(3, 10)
	// Token-exact reads, no steps.
	want(t, "hit", s.Simulate(c.req(time.Second, false)), 2100, 10, 0, ReasonHit)
	s = New(r, Options{})
	c = (&conv{ns: 1}).sys(2000, false)
	want(t, "below", s.Simulate(c.req(0, false)), 0, 0, 2000, ReasonBelowMinimum)
}

func TestDeepSeekUnits(t *testing.T) {
	r := DefaultRules(ProviderDeepSeek)
	s := New(r, Options{})
	// A+B, then A+C misses (units are whole requests), then A+D hits A:
	// the prefix common to the first two became a unit.
	a := (&conv{ns: 1}).sys(1000, false)
	ab := *a
	ab.blocks = append(append([]Block(nil), a.blocks...), Block{Hash: 2, Tokens: 100})
	ac := *a
	ac.blocks = append(append([]Block(nil), a.blocks...), Block{Hash: 3, Tokens: 100})
	ad := *a
	ad.blocks = append(append([]Block(nil), a.blocks...), Block{Hash: 4, Tokens: 100})
	want(t, "A+B", s.Simulate(ab.req(0, false)), 0, 1088, 12, ReasonCold)
	want(t, "A+C", s.Simulate(ac.req(time.Second, false)), 0, 1088, 12, ReasonPrefixChanged)
	want(t, "A+D", s.Simulate(ad.req(2*time.Second, false)), 960, 128, 12, ReasonPrefixChanged)
	// Fewer than 64 tokens are never cached.
	s = New(r, Options{})
	c := (&conv{ns: 1}).sys(63, false)
	want(t, "tiny", s.Simulate(c.req(0, false)), 0, 0, 63, ReasonBelowMinimum)
	// A repeated request reads whole 64-token units.
	c = (&conv{ns: 1}).sys(1000, false)
	s.Simulate(c.req(0, false))
	want(t, "repeat", s.Simulate(c.req(time.Second, false)), 960, 0, 40, ReasonHit)
}

func TestBoundedEntries(t *testing.T) {
	for _, r := range []Rules{RulesFor(ProviderOpenAI, "gpt-5.1"), RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), DefaultRules(ProviderDeepSeek)} {
		s := New(r, Options{MaxEntries: 10})
		c := (&conv{ns: 1}).sys(2000, true)
		for i := 0; i < 1000; i++ {
			c.msg(uint64(i+10), 5)
			c.blocks[len(c.blocks)-1].Breakpoint = i%3 == 0
			s.Simulate(c.req(time.Duration(i)*time.Second, true))
			if s.Len() > 10 {
				t.Fatalf("%v call %d: %d entries, bound 10", r.Provider, i, s.Len())
			}
		}
	}
}

func TestCheck(t *testing.T) {
	if err := Check(&Request{Blocks: []Block{{Tokens: -1}}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("negative tokens: %v", err)
	}
	if err := Check(&Request{Blocks: []Block{{Tokens: 1}}}); err != nil {
		t.Error(err)
	}
}

func TestSimulateAllocsSteadyState(t *testing.T) {
	s := New(RulesFor(ProviderAnthropic, "claude-sonnet-4-5"), Options{})
	c := (&conv{ns: 1}).sys(2000, true).msg(10, 100)
	req := c.req(0, true)
	s.Simulate(req)
	allocs := testing.AllocsPerRun(100, func() {
		req.Time = req.Time.Add(time.Second)
		s.Simulate(req)
	})
	if allocs != 0 {
		t.Errorf("Simulate of a repeated request allocates %.1f times, want 0", allocs)
	}
}

func TestChainReuseMatchesFullHash(t *testing.T) {
	a := &Request{Time: t0, Namespace: 3, Blocks: []Block{{Hash: 1, Tokens: 10}, {Hash: 2, Tokens: 20}, {Hash: 3, Tokens: 30}}}
	b := &Request{Time: t0.Add(time.Second), Namespace: 3, Blocks: []Block{{Hash: 1, Tokens: 10}, {Hash: 2, Tokens: 20}, {Hash: 9, Tokens: 5}, {Hash: 4, Tokens: 1}}}
	s := New(RulesFor(ProviderOpenAI, "gpt-5.1"), Options{})
	s.Simulate(a)
	s.Simulate(b)
	got := append([]uint64(nil), s.chain...)
	fresh := New(RulesFor(ProviderOpenAI, "gpt-5.1"), Options{})
	fresh.Simulate(b)
	for i := range got {
		if got[i] != fresh.chain[i] {
			t.Fatalf("block %d: reused chain %x, full hash %x", i, got[i], fresh.chain[i])
		}
	}
	if len(got) != 4 || s.cum[3] != 36 {
		t.Errorf("chain %d blocks, cum %v", len(got), s.cum)
	}
}
