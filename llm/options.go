package llm

import "strconv"

// RequestOptions are the per-request options services set beyond the
// conversation itself. Each wire encodes them under its own names (package
// provider); an option a wire has no equivalent for is refused with
// provider.ErrUnsupportedOption before anything is sent, never dropped.
// The zero value sends nothing: every provider default applies.
type RequestOptions struct {
	// ToolChoice says whether and which tool the model must call: Chat
	// Completions and Responses tool_choice ("auto", "none", "required" or
	// the named function), Anthropic tool_choice (auto, none, any, tool).
	// It needs Request.Tools, and ToolChoiceTool an offered tool's name.
	// Anthropic refuses a forced tool (required, tool) with extended
	// thinking (Request.Reasoning set).
	ToolChoice ToolChoice
	// ParallelToolCalls, when set, allows or forbids several tool calls in
	// one assistant turn: parallel_tool_calls on the OpenAI wires,
	// tool_choice.disable_parallel_tool_use (negated) on Anthropic. It
	// needs Request.Tools.
	ParallelToolCalls *bool
	// ResponseFormat asks for JSON output, optionally matching a schema:
	// Chat Completions response_format, Responses text.format, Anthropic
	// output_config.format (a JSON schema only: json_object is refused).
	ResponseFormat *ResponseFormat
	// Stop lists sequences at which the model stops generating: stop on
	// Chat Completions, stop_sequences on Anthropic; refused on Responses,
	// which has none.
	Stop []string
	// TopP is nucleus sampling's probability mass, within [0, 1]: top_p
	// on every wire.
	TopP *float64
	// Headers are added to the HTTP request (after the transport's own, which
	// they cannot replace: authentication and content headers are refused).
	Headers map[string]string
	// ExtraBody is a JSON object whose members are added at the top level of
	// the request body, for provider fields this module has no name for. A
	// member the encoder already wrote is refused, not overwritten.
	ExtraBody []byte
}

// ToolChoiceMode is the kind of a ToolChoice.
type ToolChoiceMode uint8

const (
	// ToolChoiceDefault sends nothing: the provider decides (auto when tools
	// are offered).
	ToolChoiceDefault ToolChoiceMode = iota
	// ToolChoiceAuto lets the model choose between text and tool calls.
	ToolChoiceAuto
	// ToolChoiceNone forbids tool calls.
	ToolChoiceNone
	// ToolChoiceRequired makes the model call at least one tool.
	ToolChoiceRequired
	// ToolChoiceTool makes the model call the tool named in ToolChoice.Name.
	ToolChoiceTool
)

// ToolChoice is RequestOptions.ToolChoice: a mode and, for ToolChoiceTool,
// the tool's name.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string
}

// ResponseFormatType is the kind of a ResponseFormat.
type ResponseFormatType uint8

const (
	// ResponseText is plain text (the default; sent only when asked for).
	ResponseText ResponseFormatType = iota
	// ResponseJSONObject asks for any valid JSON object.
	ResponseJSONObject
	// ResponseJSONSchema asks for JSON matching Schema.
	ResponseJSONSchema
)

// ResponseFormat is RequestOptions.ResponseFormat.
type ResponseFormat struct {
	Type ResponseFormatType
	// Name names the schema (required by OpenAI for ResponseJSONSchema).
	Name string
	// Schema is the JSON schema (raw JSON text) for ResponseJSONSchema.
	Schema []byte
	// Strict asks the provider to enforce the schema exactly, where it can.
	Strict bool
}

var toolChoiceNames = [...]string{"default", "auto", "none", "required", "tool"}

// String returns the mode's name: "default", "auto", "none", "required"
// or "tool".
func (m ToolChoiceMode) String() string {
	if int(m) < len(toolChoiceNames) {
		return toolChoiceNames[m]
	}
	return "ToolChoiceMode(" + strconv.Itoa(int(m)) + ")"
}

var responseFormatNames = [...]string{"text", "json_object", "json_schema"}

// String returns the type's name: "text", "json_object" or "json_schema".
func (t ResponseFormatType) String() string {
	if int(t) < len(responseFormatNames) {
		return responseFormatNames[t]
	}
	return "ResponseFormatType(" + strconv.Itoa(int(t)) + ")"
}
