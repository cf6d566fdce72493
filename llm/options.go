package llm

// RequestOptions are the per-request options services set beyond the
// conversation itself. Each wire encodes them under its own names (package
// provider); an option a wire has no equivalent for is refused with
// provider.ErrUnsupportedOption before anything is sent, never dropped.
// The zero value sends nothing: every provider default applies.
type RequestOptions struct {
	// ToolChoice says whether and which tool the model must call.
	ToolChoice ToolChoice
	// ParallelToolCalls, when set, allows or forbids several tool calls in
	// one assistant turn.
	ParallelToolCalls *bool
	// ResponseFormat asks for JSON output, optionally matching a schema.
	ResponseFormat *ResponseFormat
	// Stop lists sequences at which the model stops generating.
	Stop []string
	// TopP is nucleus sampling's probability mass.
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
