package llm

// Role is the author of a message.
type Role uint8

const (
	RoleAssistant Role = iota
	RoleUser
	RoleToolResult
)

var roleNames = [...]string{RoleAssistant: "assistant", RoleUser: "user", RoleToolResult: "toolResult"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "unknown"
}

// ParseRole is the inverse of Role.String.
func ParseRole(s string) (Role, bool) {
	for i, n := range roleNames {
		if n == s {
			return Role(i), true
		}
	}
	return 0, false
}

// StopReason says why an assistant message ended.
type StopReason uint8

const (
	StopNone StopReason = iota // still streaming
	StopStop
	StopLength
	StopToolUse
	StopError
	StopAborted
	numStopReasons
)

var stopNames = [numStopReasons]string{
	StopNone: "", StopStop: "stop", StopLength: "length", StopToolUse: "toolUse",
	StopError: "error", StopAborted: "aborted",
}

// String returns pi-ai's name of r ("stop", "toolUse", ...).
func (r StopReason) String() string {
	if r < numStopReasons {
		return stopNames[r]
	}
	return "unknown"
}

// ParseStopReason is the inverse of StopReason.String.
func ParseStopReason(s string) (StopReason, bool) {
	for i, n := range stopNames {
		if n == s && i != int(StopNone) {
			return StopReason(i), true
		}
	}
	return StopNone, false
}

// BlockType is the kind of a content block.
type BlockType uint8

const (
	BlockText BlockType = iota
	BlockThinking
	BlockToolCall
	BlockImage
)

var blockNames = [...]string{BlockText: "text", BlockThinking: "thinking", BlockToolCall: "toolCall", BlockImage: "image"}

func (t BlockType) String() string {
	if int(t) < len(blockNames) {
		return blockNames[t]
	}
	return "unknown"
}

// Block is one element of a message's content. Which fields are used
// depends on Type:
//
//   - text: Text, Signature (textSignature)
//   - thinking: Text (the thinking), Signature (thinkingSignature), Redacted
//   - toolCall: ID, Name, RawArgs, Arguments, Signature (thoughtSignature)
//   - image: Text (base64 data), MimeType
//
// For a tool call, RawArgs accumulates the argument text exactly as the
// provider streamed it (pi-ai's partialArgs) and Arguments holds the final
// JSON value once it is known: normally an object; OpenClaw's own profile
// can leave a string, null or an array there, as OpenClaw does. An empty
// Arguments means "not decided yet". Fields are byte slices so that a reset
// message keeps their capacity for the next stream.
type Block struct {
	Type BlockType
	// The flags come first, beside Type, so that they share its word
	// (a block is 184 bytes, not 208).
	Redacted bool
	// SignatureSet marks a thinking block whose signature is present even
	// when empty (@openclaw/ai's Anthropic thinking always has a string
	// thinkingSignature): it is then written as "".
	SignatureSet bool
	// Unstopped marks a block of OpenClaw's Anthropic transport whose
	// content_block_stop never came: @openclaw/ai leaves the stream index
	// on such a block (and, on a tool call, its partialJson, which is
	// RawArgs), so they are written as "index" (StreamIndex) and
	// "partialJson". Only the openclaw profile sets it.
	Unstopped bool
	// ReplayMarked marks a thinking block of OpenClaw's Responses transport
	// that carries encrypted reasoning: a message with a ReplayBaseURL
	// writes its openclawReasoningReplay marker (the endpoint it may be
	// replayed to). Only the openclaw profile sets it.
	ReplayMarked bool
	Text         []byte
	Signature    []byte
	ID           []byte
	Name         []byte
	RawArgs      []byte
	Arguments    []byte
	MimeType     []byte
	StreamIndex  int64
}

// reset empties b, keeping the capacity of its buffers.
func (b *Block) reset(t BlockType) {
	*b = Block{
		Type:      t,
		Text:      b.Text[:0],
		Signature: b.Signature[:0],
		ID:        b.ID[:0],
		Name:      b.Name[:0],
		RawArgs:   b.RawArgs[:0],
		Arguments: b.Arguments[:0],
		MimeType:  b.MimeType[:0],
	}
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// Clone returns a deep copy of b that shares no memory with it.
func (b *Block) Clone() Block {
	return Block{
		Type:         b.Type,
		Text:         cloneBytes(b.Text),
		Signature:    cloneBytes(b.Signature),
		Redacted:     b.Redacted,
		SignatureSet: b.SignatureSet,
		ID:           cloneBytes(b.ID),
		Name:         cloneBytes(b.Name),
		RawArgs:      cloneBytes(b.RawArgs),
		Arguments:    cloneBytes(b.Arguments),
		MimeType:     cloneBytes(b.MimeType),
		Unstopped:    b.Unstopped,
		StreamIndex:  b.StreamIndex,
		ReplayMarked: b.ReplayMarked,
	}
}

// Usage is the token accounting of one model call, in pi-ai's terms: Input
// excludes cache reads and writes; TotalTokens is their sum with Output.
type Usage struct {
	Input       int64
	Output      int64
	CacheRead   int64
	CacheWrite  int64
	TotalTokens int64
	Reasoning   int64 // reasoning tokens, a part of Output, where reported
	Cost        Cost
	// CacheWrite1h is the part of CacheWrite written for one hour, written
	// as OpenClaw's cacheWrite1h when CacheWrite1hShown (the openclaw
	// profile, where Anthropic reported it).
	CacheWrite1h      int64
	CacheWrite1hShown bool
	// ReasoningShown writes Reasoning as OpenClaw's reasoningTokens, in the
	// place its transport puts it; only the openclaw profile sets it.
	ReasoningShown ReasoningPlace
}

// ReasoningPlace is where a usage's reasoningTokens is written, if at all.
type ReasoningPlace uint8

const (
	ReasoningHidden      ReasoningPlace = iota
	ReasoningBeforeTotal                // @openclaw/ai's completions transport
	ReasoningAfterTotal                 // its Responses transport
)

// Cost is the price of a call in US dollars, where known.
type Cost struct {
	Input, Output, CacheRead, CacheWrite, Total float64
}

// Message is one message of a conversation. Assistant messages carry
// StopReason, Usage and the model identity; tool results carry ToolCallID,
// ToolName and IsError. Timestamp is Unix milliseconds.
type Message struct {
	// Role, StopReason and IsError share a word (a message is 272 bytes,
	// not 296).
	Role         Role
	StopReason   StopReason
	IsError      bool
	Content      []Block
	ErrorMessage string
	Usage        Usage
	API          API
	Provider     string
	Model        string
	// ReplayBaseURL is the endpoint OpenClaw's reasoning replay markers
	// name (by hash), on blocks with ReplayMarked.
	ReplayBaseURL string
	ResponseID    string
	ToolCallID    string
	ToolName      string
	Timestamp     int64
}

// Reset empties m for reuse by the next stream, keeping the capacity of its
// content slice and of every block's buffers.
func (m *Message) Reset() {
	content := m.Content[:0]
	*m = Message{Content: content}
}

// AddBlock appends a block of type t, reusing a previously allocated slot
// and its buffers when there is one, and returns its index and a pointer to
// it. The pointer is valid until the next AddBlock.
func (m *Message) AddBlock(t BlockType) (int, *Block) {
	i := len(m.Content)
	if i < cap(m.Content) {
		m.Content = m.Content[:i+1]
	} else {
		m.Content = append(m.Content, Block{})
	}
	b := &m.Content[i]
	b.reset(t)
	return i, b
}

// Block returns the block at i, or nil when i is out of range.
func (m *Message) Block(i int) *Block {
	if i < 0 || i >= len(m.Content) {
		return nil
	}
	return &m.Content[i]
}

// ToolCalls appends the indexes of m's tool-call blocks to dst.
func (m *Message) ToolCalls(dst []int) []int {
	for i := range m.Content {
		if m.Content[i].Type == BlockToolCall {
			dst = append(dst, i)
		}
	}
	return dst
}

// TextContent returns the concatenation of m's text blocks.
func (m *Message) TextContent() string {
	n := 0
	for i := range m.Content {
		if m.Content[i].Type == BlockText {
			n += len(m.Content[i].Text)
		}
	}
	buf := make([]byte, 0, n)
	for i := range m.Content {
		if m.Content[i].Type == BlockText {
			buf = append(buf, m.Content[i].Text...)
		}
	}
	return string(buf)
}

// Clone returns a deep copy of m that shares no memory with it.
func (m *Message) Clone() *Message {
	c := *m
	c.Content = make([]Block, len(m.Content))
	for i := range m.Content {
		c.Content[i] = m.Content[i].Clone()
	}
	return &c
}

// Fail ends m as a failed message: StopReason becomes reason (StopError or
// StopAborted) and ErrorMessage msg. Content already decoded is kept.
func (m *Message) Fail(reason StopReason, msg string) {
	m.StopReason = reason
	m.ErrorMessage = msg
}

// TextMessage returns a message of role r holding one text block.
func TextMessage(r Role, text string) Message {
	return Message{Role: r, Content: []Block{{Type: BlockText, Text: []byte(text)}}}
}
