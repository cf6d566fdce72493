package transcript

import (
	"time"

	"github.com/ocbench/ocbench/llm"
)

// EntryType is the kind of a session entry (spec §4.2). Types the reader
// does not know are TypeUnknown; their raw name is in Entry.RawType.
type EntryType uint8

const (
	TypeUnknown EntryType = iota
	TypeMessage
	TypeModelChange
	TypeThinkingLevelChange
	TypeCompaction
	TypeBranchSummary
	TypeCustom
	TypeCustomMessage
	TypeLabel
	TypeSessionInfo
	// TypeReset is OpenClaw's reset boundary (session version 4): a fresh
	// history window, keeping what firstKeptEntryId names.
	TypeReset
	// TypeLeaf is OpenClaw's navigation control (version 4): it moves the
	// active branch to TargetID; entries chained to it continue there.
	TypeLeaf
	numEntryTypes
)

// NumEntryTypes is the number of entry types, for arrays indexed by EntryType.
const NumEntryTypes = int(numEntryTypes)

var entryTypeNames = [numEntryTypes]string{
	TypeUnknown:             "unknown",
	TypeMessage:             "message",
	TypeModelChange:         "model_change",
	TypeThinkingLevelChange: "thinking_level_change",
	TypeCompaction:          "compaction",
	TypeBranchSummary:       "branch_summary",
	TypeCustom:              "custom",
	TypeCustomMessage:       "custom_message",
	TypeLabel:               "label",
	TypeSessionInfo:         "session_info",
	TypeReset:               "reset",
	TypeLeaf:                "leaf",
}

// String returns the type's name as written in the file.
func (t EntryType) String() string {
	if t < numEntryTypes {
		return entryTypeNames[t]
	}
	return "unknown"
}

// parseEntryType maps a raw type name to an EntryType without allocating.
func parseEntryType(b []byte) EntryType {
	switch string(b) {
	case "message":
		return TypeMessage
	case "model_change":
		return TypeModelChange
	case "thinking_level_change":
		return TypeThinkingLevelChange
	case "compaction":
		return TypeCompaction
	case "branch_summary":
		return TypeBranchSummary
	case "custom":
		return TypeCustom
	case "custom_message":
		return TypeCustomMessage
	case "label":
		return TypeLabel
	case "session_info":
		return TypeSessionInfo
	case "reset":
		return TypeReset
	case "leaf":
		return TypeLeaf
	}
	return TypeUnknown
}

// Entry is one line of a session file after the header, migrated to
// version 3. Which fields are set depends on Type:
//
//   - message: Message (user, assistant, toolResult), or, for the agent-only
//     roles (custom, bashExecution, branchSummary, compactionSummary; v2's
//     hookMessage is migrated to custom), Message is nil and MessageRole and
//     MessageJSON hold the role and the raw message;
//   - model_change: Provider, ModelID;
//   - thinking_level_change: ThinkingLevel;
//   - compaction: Summary, FirstKeptEntryID, TokensBefore, Details, FromHook;
//   - branch_summary: FromID, Summary, Details, FromHook;
//   - custom: CustomType, Data;
//   - custom_message: CustomType, Content (raw JSON: a string or blocks),
//     Display, Details;
//   - label: TargetID, Label;
//   - session_info: Name;
//   - reset: Reason (new, reset, idle, daily, cron-stale), FirstKeptEntryID;
//   - leaf: TargetID (empty for null), AppendParentID (when
//     AppendParentSet), AppendSide.
//
// Any entry may carry appendMode "side" (AppendSide: written beside the
// active branch without moving it). ParentAbsent is set when the entry has
// no parentId key at all (OpenClaw then chains it to the active leaf),
// as opposed to a null parentId (a root).
//
// Byte-slice fields are borrowed: they point into the Reader's buffers and
// are valid only until the next call to Reader.Next. Raw JSON fields (Data,
// Details, Content, MessageJSON) are compact JSON texts. Message, when set,
// is freshly allocated for each entry and never reused by the Reader, so it
// may be retained as is. Clone returns an Entry that owns all its memory.
type Entry struct {
	Type      EntryType
	RawType   []byte // the type as written ("message", or an unknown name)
	ID        []byte
	ParentID  []byte // empty for the first entry (null in the file)
	Timestamp int64  // Unix milliseconds; 0 when absent or unparsable

	Message     *llm.Message
	MessageRole []byte // the message's role as written
	MessageJSON []byte // raw message, set only when Message is nil

	Provider, ModelID []byte
	ThinkingLevel     []byte

	Summary          []byte
	FirstKeptEntryID []byte
	TokensBefore     int64
	FromID           []byte
	FromHook         bool
	Details          []byte

	CustomType []byte
	Data       []byte
	Content    []byte
	Display    bool

	TargetID []byte
	Label    []byte
	Name     []byte

	Reason          []byte
	AppendParentID  []byte
	AppendParentSet bool
	AppendSide      bool
	ParentAbsent    bool
	// ExcludeFromContext is a message's excludeFromContext flag.
	ExcludeFromContext bool

	// Line is the 1-based line number and Offset the byte offset of the
	// line's start in the (decompressed) file.
	Line   int64
	Offset int64
}

// Time returns Timestamp as a time.Time (the zero Time when unknown).
func (e *Entry) Time() time.Time {
	if e.Timestamp == 0 {
		return time.Time{}
	}
	return time.UnixMilli(e.Timestamp).UTC()
}

// Clone returns a copy of e that shares no borrowed memory with the Reader.
// The Message pointer is shared: the Reader never reuses it. The byte
// fields are copied into one buffer (each a capacity-capped window of it,
// so that an append to one never reaches another): one allocation per
// entry rather than one per field.
func (e *Entry) Clone() Entry {
	c := *e
	fields := [...]*[]byte{&c.RawType, &c.ID, &c.ParentID, &c.MessageRole, &c.MessageJSON, &c.Provider, &c.ModelID,
		&c.ThinkingLevel, &c.Summary, &c.FirstKeptEntryID, &c.FromID, &c.Details, &c.CustomType, &c.Data, &c.Content,
		&c.TargetID, &c.Label, &c.Name, &c.Reason, &c.AppendParentID}
	packBytes(fields[:])
	return c
}

// packBytes points each of fields at a copy of its bytes, all in one new
// buffer, each a capacity-capped window of it (nil stays nil, empty
// stays empty).
func packBytes(fields []*[]byte) {
	n := 0
	for _, f := range fields {
		n += len(*f)
	}
	buf := make([]byte, 0, n)
	for _, f := range fields {
		if *f != nil {
			start := len(buf)
			buf = append(buf, *f...)
			*f = buf[start:len(buf):len(buf)]
		}
	}
}

// Header is a session file's first line.
type Header struct {
	// Version is the version as written: 1 when absent (pi v1), else 2, 3
	// or 4 (OpenClaw 2026.9.6). Entries of versions 1 and 2 are returned
	// migrated to version 3; version 4 adds the reset and leaf entries and
	// OpenClaw's navigation rules (see Navigator).
	Version       int
	ID            string
	Cwd           string
	Timestamp     int64 // Unix milliseconds
	ParentSession string
	// Provider, ModelID and ThinkingLevel are set by pi v1 headers only.
	Provider, ModelID, ThinkingLevel string
}

// Stats counts what a Reader has seen so far.
type Stats struct {
	Lines   int64 // lines read, the header and blank lines included
	Bytes   int64 // bytes consumed
	Blank   int64 // empty or whitespace-only lines (skipped)
	Entries int64 // entries returned by Next
	ByType  [NumEntryTypes]int64
	Unknown int64 // entries of an unknown type (skipped unless Options.KeepUnknown)
	// UnknownTypes counts the unknown type names seen (at most 32 names;
	// further ones are counted under "...").
	UnknownTypes map[string]int64
	// ExtraHeaders counts further session header lines after the first
	// (OpenClaw keeps one per history window in some exports): skipped.
	ExtraHeaders int64
	// LongLines counts lines over the limit skipped under
	// Options.SkipLongLines; FirstLong is the first one's line number.
	LongLines, FirstLong int64
	BadLines             int64 // malformed lines skipped (not the torn last line)
	FirstBad             int64 // line number of the first malformed line, 0 if none
	Torn                 bool  // the last line was incomplete (no newline, not valid JSON)
	TornOffset           int64 // byte offset where the torn last line starts
	TornBytes            int64 // its length
}
