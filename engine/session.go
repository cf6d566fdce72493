package engine

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sync"

	"github.com/ocbench/ocbench/llm"
	"github.com/ocbench/ocbench/tokenize"
	"github.com/ocbench/ocbench/transcript"
)

// SessionOptions configure a file session.
type SessionOptions struct {
	// Durability is the transcript's flush policy (default: fsync per
	// entry). Under transcript.SyncTurn the run flushes after each turn's
	// tool results.
	Durability transcript.Durability
	// RotateAfterCompaction moves the pre-compaction transcript into a
	// zstd archive after a successful compaction (transcript.Writer.Rotate).
	RotateAfterCompaction bool
	// MaxSessionBytes bounds the session's stored size: an append past it
	// fails the run with an error matching transcript.ErrSessionTooLarge,
	// and nothing of it is written (0: no limit). A service that lets
	// clients grow sessions sets it.
	MaxSessionBytes int64
}

// session is the run's view of its transcript: the entries of the file
// (or of memory, for an ephemeral session), appended through the
// transcript writer that holds the file's lock.
type session struct {
	w       transcript.SessionWriter // nil for an ephemeral session
	sid     string
	entries []transcript.Entry // loaded entries, and appended ones once materialized
	added   []lightEntry       // message entries appended since the last materialize
	// addedParent is the parent of added[0] (each next one's is the id
	// of the one before it); addedBuf holds the first few of added, and
	// addedRoom is the room made for the rest when they do not fit.
	addedParent []byte
	addedBuf    [4]lightEntry
	addedRoom   int
	leafID      []byte // id of the leaf entry (shared with it); empty for none
	ctx         []llm.Message
	dirty       bool // ctx must be rebuilt from entries
	notesL      []string
	rotate      bool
	scratch     []byte
	version     int // the session's header version (context rules)
	// seeded are the messages of an in-memory session's History; branched
	// says the branch is no longer seeded + the appended messages (a
	// compaction or a rewrite happened).
	seeded   []llm.Message
	branched bool
	idBuf    []byte // ephemeral entry ids are cut from it
	// live is the live-session cache's view of a file or store session,
	// made with it (fileSession); nil for an ephemeral one, which has no
	// use for its 600 bytes.
	live *liveBase
}

// fileSession is a session of a file or a store and its live-cache view,
// in one allocation.
type fileSession struct {
	s    session
	live liveBase
}

// lightEntry is an appended message entry, kept small on the turn path
// and turned into a transcript.Entry only when the branch is walked
// (compaction, context rebuild). Its parent is the entry before it
// (session.addedParentOf).
type lightEntry struct {
	id  []byte
	msg *llm.Message
}

// addedParentOf returns the parent id of added[i].
func (s *session) addedParentOf(i int) []byte {
	if i == 0 {
		return s.addedParent
	}
	return s.added[i-1].id
}

// materialize moves the appended message entries into entries, giving
// an ephemeral session's their ids (derived from their position).
func (s *session) materialize() {
	if len(s.added) > 0 && s.w == nil {
		s.nameAdded()
	}
	for i, a := range s.added {
		s.entries = append(s.entries, transcript.Entry{Type: transcript.TypeMessage, ID: a.id, ParentID: s.addedParentOf(i),
			Message: a.msg, Timestamp: a.msg.Timestamp})
	}
	clear(s.added)
	s.added, s.addedParent = s.added[:0], nil
}

// nameAdded gives the appended entries of an ephemeral session their ids:
// the number of each entry, from 1, in hex (as ephemeralID), which its
// position says, so the turn path writes none. The leaf is the last one.
func (s *session) nameAdded() {
	if s.added[len(s.added)-1].id != nil {
		return
	}
	n := uint(len(s.entries))
	for i := range s.added {
		if s.added[i].id == nil {
			s.added[i].id = s.entryID(n + uint(i) + 1)
		}
	}
	s.leafID = s.added[len(s.added)-1].id
}

// leaf returns the id of the leaf entry.
func (s *session) leaf() []byte {
	if len(s.added) > 0 && s.w == nil {
		s.nameAdded()
	}
	return s.leafID
}

// openSession opens (or creates) the session of p, taking its lock.
func openSession(p *Params) (*session, error) {
	// Room for the entries of the run's turns (an answer and a tool
	// result each) past the first few, as the history makes (growHist).
	var s *session
	if p.SessionStore != nil || p.SessionFile != "" {
		fs := new(fileSession)
		s = &fs.s
		s.live = &fs.live
	} else {
		s = new(session)
	}
	s.sid, s.rotate, s.addedRoom = p.SessionID, p.Session.RotateAfterCompaction, min(max(2*p.MaxTurns+2, 8), 32)
	if p.SessionStore != nil {
		return openStoreSession(p, s)
	}
	if p.SessionFile == "" {
		if s.sid == "" {
			s.sid = newSessionID()
		}
		s.seed(p.History)
		return s, nil
	}
	if dir := filepath.Dir(p.SessionFile); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("engine: session directory: %w", err)
		}
	}
	cwd := p.Workspace
	if abs, err := absPath(cwd); err == nil && cwd != "" {
		cwd = abs
	}
	w, err := transcript.OpenWriter(p.SessionFile, transcript.WriterOptions{
		Durability: p.Session.Durability, SessionID: p.SessionID, Cwd: cwd, Now: p.Now,
		MaxSessionBytes: p.Session.MaxSessionBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("engine: session %s: %w", p.SessionFile, err)
	}
	s.w = w
	s.sid = w.Header().ID
	s.notesFromRecovery(w.Recovery())
	if s.fromCache() {
		return s, nil
	}
	if err := s.load(func(o transcript.Options) (*transcript.Reader, error) { return transcript.OpenFile(p.SessionFile, o) }); err != nil {
		w.Close()
		return nil, fmt.Errorf("engine: session %s: %w", p.SessionFile, err)
	}
	return s, nil
}

// openStoreSession opens the session p.SessionID of p.SessionStore.
func openStoreSession(p *Params, s *session) (*session, error) {
	st := p.SessionStore
	if s.sid == "" {
		s.sid = newSessionID()
	}
	cwd := p.Workspace
	if abs, err := absPath(cwd); err == nil && cwd != "" {
		cwd = abs
	}
	w, err := st.Open(context.Background(), s.sid, transcript.WriterOptions{Durability: p.Session.Durability, SessionID: s.sid, Cwd: cwd, Now: p.Now,
		MaxSessionBytes: p.Session.MaxSessionBytes})
	if err != nil {
		return nil, fmt.Errorf("engine: session %s in the %s store: %w", s.sid, st.Kind(), err)
	}
	s.w = w
	s.notesFromRecovery(w.Recovery())
	if s.fromCache() {
		return s, nil
	}
	if err := s.load(func(o transcript.Options) (*transcript.Reader, error) {
		return st.Reader(context.Background(), s.sid, o)
	}); err != nil {
		w.Close()
		return nil, fmt.Errorf("engine: session %s in the %s store: %w", s.sid, st.Kind(), err)
	}
	return s, nil
}

// seed makes msgs the entries of an in-memory session, one branch in
// order, as if they had been appended (the caller's slice is not kept).
func (s *session) seed(msgs []llm.Message) {
	if len(msgs) == 0 {
		return
	}
	own := append([]llm.Message(nil), msgs...)
	s.seeded = own
	s.entries = make([]transcript.Entry, 0, len(own)+8)
	for i := range own {
		id := s.ephemeralID()
		s.entries = append(s.entries, transcript.Entry{Type: transcript.TypeMessage, ID: id, ParentID: s.leafID,
			Message: &own[i], Timestamp: own[i].Timestamp})
		s.leafID = id
	}
	s.dirty = true
}

func (s *session) notesFromRecovery(rec transcript.Recovery) {
	if rec.Torn {
		s.notesL = append(s.notesL, fmt.Sprintf("session file: a torn last line (%d bytes at offset %d) was set aside in %s", rec.TornBytes, rec.TornOffset, rec.SideFile))
	}
	if rec.BadLines > 0 {
		s.notesL = append(s.notesL, fmt.Sprintf("session file: %d malformed lines were skipped", rec.BadLines))
	}
	if rec.MigratedFrom > 0 {
		s.notesL = append(s.notesL, fmt.Sprintf("session file: migrated from version %d to 3", rec.MigratedFrom))
	}
	if len(rec.StaleTemps) > 0 {
		s.notesL = append(s.notesL, fmt.Sprintf("session file: removed %d temporary files left by an interrupted rotation", len(rec.StaleTemps)))
	}
}

func (s *session) load(open func(transcript.Options) (*transcript.Reader, error)) error {
	rd, err := open(transcript.Options{KeepUnknown: true})
	if err != nil {
		return err
	}
	defer rd.Close()
	s.version = 3
	for rd.Next() {
		s.version = rd.Header().Version
		// An entry without an id (another tool's JSON line) can be on no
		// branch: it stays in the file but not in the session's view.
		if e := rd.Entry(); len(e.ID) > 0 {
			s.entries = append(s.entries, e.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	if v := rd.Header().Version; v > 0 {
		s.version = v
	}
	leaf := s.w.Leaf()
	if leaf == "" {
		// The file may end with lines that are not entries of a session
		// (another tool's JSON, entries without ids): continue the branch
		// from the last real entry instead of starting a disconnected root.
		for i := len(s.entries) - 1; i >= 0; i-- {
			if id := s.entries[i].ID; len(id) > 0 {
				if err := s.w.SetLeaf(string(id)); err != nil {
					return err
				}
				leaf = string(id)
				s.notesL = append(s.notesL, fmt.Sprintf("session file: trailing lines without an entry id; continuing from entry %s", id))
				break
			}
		}
	}
	s.leafID = []byte(leaf)
	s.dirty = true
	s.loaded(rd.Stats())
	return nil
}

// sessionIDs makes the ids of sessions that have none: 128 bits of a
// ChaCha8 generator (cryptographically strong) seeded once from
// crypto/rand, instead of a getrandom call per run. The ids reach the
// provider (prompt-cache keys), so they stay unguessable.
var sessionIDs struct {
	mu  sync.Mutex
	gen *mrand.ChaCha8
}

func newSessionID() string {
	g := &sessionIDs
	g.mu.Lock()
	if g.gen == nil {
		var seed [32]byte
		_, _ = rand.Read(seed[:])
		g.gen = mrand.NewChaCha8(seed)
	}
	a, b := g.gen.Uint64(), g.gen.Uint64()
	g.mu.Unlock()
	const digits = "0123456789abcdef"
	var id [32]byte
	for i := range 16 {
		id[i], id[16+i] = digits[a>>(60-4*i)&15], digits[b>>(60-4*i)&15]
	}
	return string(id[:])
}

func (s *session) id() string { return s.sid }

// takeNotes returns the remarks gathered since the last call.
func (s *session) takeNotes() []string {
	n := s.notesL
	s.notesL = nil
	return n
}

// conversation returns an in-memory session's conversation after the
// run: seeded + added while the branch is that (no context rebuild),
// else the rebuilt context of the active branch.
func (s *session) conversation(added []llm.Message) []llm.Message {
	if s.branched {
		return s.messages()
	}
	if len(s.seeded) == 0 {
		// A new conversation is just what the run added: share it (capped,
		// so that appending to either never reaches the other).
		return added[:len(added):len(added)]
	}
	return append(append(make([]llm.Message, 0, len(s.seeded)+len(added)), s.seeded...), added...)
}

// messages returns the context of the active branch (pi's
// buildSessionContext + convertToLlm), rebuilt after compaction.
func (s *session) messages() []llm.Message {
	if s.dirty {
		s.materialize()
		sc := transcript.BuildSessionContextVersion(s.entries, s.version)
		if s.live != nil && s.live.lw != nil && !s.live.scOK && len(s.entries) == s.live.entries {
			// The context of the view the live cache keeps.
			s.live.sc, s.live.scOK = sc, true
		}
		s.ctx = sc.Messages
		s.dirty = false
	}
	return s.ctx
}

// append writes m as a message entry. m must not be changed afterwards:
// the session keeps the pointer.
func (s *session) append(m *llm.Message) error {
	var cid []byte
	if s.w != nil {
		id, err := s.w.AppendMessage(m)
		if err != nil {
			return fmt.Errorf("engine: appending to the session: %w", err)
		}
		cid = []byte(id)
		if s.live != nil && s.live.lw != nil {
			lw := s.live.lw
			if s.live.ends == nil {
				s.live.ends = s.live.endsBuf[:0]
			}
			s.live.ends = append(s.live.ends, lw.Size())
		}
	}
	// An ephemeral entry's id (cid nil) is given when something asks for
	// it (nameAdded): most runs never do.
	switch {
	case s.added == nil:
		// Most runs append a prompt and an answer.
		s.added = s.addedBuf[:0]
	case len(s.added) == len(s.addedBuf) && &s.added[0] == &s.addedBuf[0]:
		// A tool loop: room for the run's turns at once (addedRoom).
		s.added = append(make([]lightEntry, 0, max(s.addedRoom, 2*len(s.addedBuf))), s.added...)
	}
	if len(s.added) == 0 {
		s.addedParent = s.leafID
	}
	s.added = append(s.added, lightEntry{id: cid, msg: m})
	if cid != nil {
		s.leafID = cid
	}
	// The context is rebuilt from the entries when next asked for (only
	// compaction asks during a run); appending stays cheap.
	s.dirty = true
	return nil
}

// ephemeralID is the next entry number in hex (see entryID).
func (s *session) ephemeralID() []byte {
	return s.entryID(uint(len(s.entries) + len(s.added) + 1))
}

// entryID is entry number n in hex, cut from a shared buffer (a run's ids
// take a few bytes each).
func (s *session) entryID(n uint) []byte {
	if cap(s.idBuf)-len(s.idBuf) < 16 {
		s.idBuf = make([]byte, 0, 128)
	}
	digits := 1
	for m := n >> 4; m != 0; m >>= 4 {
		digits++
	}
	// Written in place, last digit first (no copy from a scratch array).
	start := len(s.idBuf)
	s.idBuf = s.idBuf[:start+digits]
	id := s.idBuf[start : start+digits : start+digits]
	for i := len(id) - 1; i >= 0; i-- {
		id[i] = "0123456789abcdef"[n&15]
		n >>= 4
	}
	return id
}

// appendEntry writes a non-message entry (compaction).
func (s *session) appendEntry(e *transcript.Entry) error {
	s.branched = true
	var cid []byte
	if s.w != nil {
		id, err := s.w.Append(e)
		if err != nil {
			return fmt.Errorf("engine: appending to the session: %w", err)
		}
		cid = []byte(id)
	} else {
		cid = s.ephemeralID()
	}
	s.materialize()
	c := *e
	c.ID, c.ParentID = cid, s.leafID
	s.entries = append(s.entries, c)
	s.leafID = cid
	s.dirty = true
	return nil
}

// endTurn flushes under the per-turn durability policy.
func (s *session) endTurn() error {
	if s.w == nil {
		return nil
	}
	return s.w.EndTurn()
}

func (s *session) close() error {
	if s.w == nil {
		return nil
	}
	s.saveLive()
	return s.w.Close()
}

// activePath returns the indexes of the entries on the active branch,
// root first.
func (s *session) activePath() []int {
	s.materialize()
	if len(s.entries) == 0 {
		return nil
	}
	byID := make(map[string]int, len(s.entries))
	for i := range s.entries {
		byID[string(s.entries[i].ID)] = i
	}
	cur, ok := byID[string(s.leafID)]
	if !ok {
		cur = len(s.entries) - 1
	}
	var path []int
	for steps := 0; steps <= len(s.entries); steps++ {
		e := &s.entries[cur]
		up := e.ParentID
		if e.Type == transcript.TypeLeaf {
			// A version-4 leaf entry stands for its target, and is itself
			// on no path.
			up = e.TargetID
		} else {
			path = append(path, cur)
		}
		next, ok := byID[string(up)]
		if len(up) == 0 || !ok {
			break
		}
		cur = next
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

func (s *session) entryTokens(e *transcript.Entry) int {
	switch {
	case e.Message != nil:
		n, buf := EstimateTokens(e.Message, s.scratch)
		s.scratch = buf
		return n
	case len(e.MessageJSON) > 0:
		n, _ := tokenize.EstimateMessageJSON(e.MessageJSON)
		return n
	case e.Type == transcript.TypeCustomMessage || e.Type == transcript.TypeBranchSummary:
		return tokenize.Estimate(len(e.Content) + len(e.Summary))
	}
	return 0
}

// isCutPoint reports whether a compaction may keep the branch from e on:
// a user or assistant message (never a tool result, which must stay with
// its call).
func isCutPoint(e *transcript.Entry) bool {
	if e.Type != transcript.TypeMessage {
		return false
	}
	if e.Message != nil {
		return e.Message.Role == llm.RoleUser || e.Message.Role == llm.RoleAssistant
	}
	r := string(e.MessageRole)
	return r == "user" || r == "custom" || r == "bashExecution"
}

// planCompaction picks where a compaction cuts the active branch: the
// latest cut point that keeps at least keepTokens of recent conversation
// (estimated), else the earliest one after the previous compaction. It
// returns the context messages that the summary replaces and the id of the
// first kept entry.
func (s *session) planCompaction(keepTokens int) ([]llm.Message, string, bool) {
	path := s.activePath()
	start := 0
	for i := len(path) - 1; i >= 0; i-- {
		if s.entries[path[i]].Type == transcript.TypeCompaction {
			start = i + 1
			break
		}
	}
	// The latest user message (the prompt being answered) is always kept.
	last := len(path) - 1
	for i := len(path) - 1; i > start; i-- {
		if e := &s.entries[path[i]]; e.Type == transcript.TypeMessage && (e.Message != nil && e.Message.Role == llm.RoleUser || string(e.MessageRole) == "user") {
			last = i
			break
		}
	}
	cut := -1
	acc := 0
	for i := len(path) - 1; i > start; i-- {
		e := &s.entries[path[i]]
		acc += s.entryTokens(e)
		if i <= last && acc >= keepTokens && isCutPoint(e) {
			cut = i
			break
		}
	}
	if cut < 0 {
		// Not enough to keep keepTokens: keep the least possible, the
		// latest cut point after the start, at or before the last user
		// message.
		for i := last; i > start; i-- {
			if isCutPoint(&s.entries[path[i]]) {
				cut = i
				break
			}
		}
	}
	if cut < 0 {
		return nil, "", false
	}
	firstKept := string(s.entries[path[cut]].ID)
	kept := len(s.previewCompaction(firstKept)) - 1
	all := s.messages()
	if kept < 0 || kept >= len(all) {
		return nil, "", false
	}
	return all[:len(all)-kept], firstKept, true
}

func (s *session) compactionEntry(summary, firstKept string, tokensBefore int) transcript.Entry {
	return transcript.Entry{Type: transcript.TypeCompaction, Summary: []byte(summary),
		FirstKeptEntryID: []byte(firstKept), TokensBefore: int64(tokensBefore)}
}

// previewCompaction returns the context a compaction at firstKept would
// give, without writing anything.
func (s *session) previewCompaction(firstKept string) []llm.Message {
	s.materialize()
	e := s.compactionEntry("-", firstKept, 0)
	e.ID = []byte("preview!")
	e.ParentID = s.leafID
	tmp := append(s.entries[:len(s.entries):len(s.entries)], e)
	return transcript.BuildContext(tmp)
}

// commitCompaction writes the compaction entry and returns the new context.
func (s *session) commitCompaction(summary, firstKept string, tokensBefore int) ([]llm.Message, error) {
	e := s.compactionEntry(summary, firstKept, tokensBefore)
	if err := s.appendEntry(&e); err != nil {
		return nil, err
	}
	rw, canRotate := s.w.(interface{ Rotate() (string, error) })
	if s.w != nil && s.rotate && canRotate {
		if archive, err := rw.Rotate(); err != nil {
			s.notesL = append(s.notesL, "session rotation after compaction failed: "+err.Error())
		} else {
			s.notesL = append(s.notesL, "pre-compaction transcript archived in "+archive)
		}
	}
	return s.messages(), nil
}

// rewriteToolResults replaces tool results on the active branch, as
// OpenClaw's transcript rewrite does: the branch is appended again from the
// first replaced result on, with the replacements, and the old entries stay
// in the file as a dead branch (nothing written is lost). repl maps a tool
// call id to its new result. It returns how many results were replaced.
func (s *session) rewriteToolResults(repl map[string]*llm.Message) (int, error) {
	s.branched = true
	path := s.activePath()
	first := -1
	for i, ix := range path {
		if m := s.entries[ix].Message; s.entries[ix].Type == transcript.TypeMessage && m != nil && m.Role == llm.RoleToolResult {
			if _, ok := repl[m.ToolCallID]; ok {
				first = i
				break
			}
		}
	}
	if first < 0 {
		return 0, nil
	}
	var parent []byte
	if first > 0 {
		parent = s.entries[path[first-1]].ID
	}
	if s.w != nil {
		if err := s.w.SetLeaf(string(parent)); err != nil {
			return 0, err
		}
	}
	s.leafID = parent
	old := make([]transcript.Entry, 0, len(path)-first)
	for _, ix := range path[first:] {
		old = append(old, s.entries[ix])
	}
	remap := make(map[string]string, len(old))
	n := 0
	for i := range old {
		e := &old[i]
		if e.Type == transcript.TypeMessage && e.Message != nil {
			m := e.Message
			if r, ok := repl[m.ToolCallID]; ok && m.Role == llm.RoleToolResult {
				m = r
				n++
			}
			if err := s.append(m); err != nil {
				return n, err
			}
		} else {
			c := *e
			c.ID = nil
			if id, ok := remap[string(e.FirstKeptEntryID)]; ok && e.Type == transcript.TypeCompaction {
				c.FirstKeptEntryID = []byte(id)
			}
			if err := s.appendEntry(&c); err != nil {
				return n, err
			}
		}
		remap[string(e.ID)] = string(s.leaf())
	}
	if s.w != nil {
		if err := s.w.EndTurn(); err != nil {
			return n, err
		}
	}
	s.dirty = true
	return n, nil
}
