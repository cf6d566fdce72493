package engine

import (
	"time"

	"github.com/ocbench/ocbench/llm"
)

// EventKind names a run event.
type EventKind uint8

const (
	EventRunStart        EventKind = iota // the run is set up; Text is the harness id
	EventTurnStart                        // a model call begins; Turn is its number (1-based)
	EventStream                           // one stream event: Stream and Message (partial)
	EventTurnEnd                          // the model call ended: Message is the final assistant message
	EventToolStart                        // a tool call starts: ToolCallID, ToolName, Args
	EventToolEnd                          // a tool call ended: Result is the tool-result message
	EventSteer                            // a queued message was delivered: Text, Mode
	EventRetry                            // a refused request is retried after Wait: Err
	EventCompactionStart                  // compaction starts: Compaction.Trigger, Compaction.Route
	EventCompactionEnd                    // compaction ended: Compaction
	EventRunEnd                           // the run ended: Err (nil when it ended cleanly)
	numEventKinds
)

var eventKindNames = [numEventKinds]string{
	"run_start", "turn_start", "stream", "turn_end", "tool_start", "tool_end",
	"steer", "retry", "compaction_start", "compaction_end", "run_end",
}

func (k EventKind) String() string {
	if k < numEventKinds {
		return eventKindNames[k]
	}
	return "unknown"
}

// Event is one observable step of a run, delivered to Params.OnEvent on
// the run's goroutine, in order. The Event and everything it points to
// are borrowed: valid only during the callback (the run reuses them).
// Copy what you keep (Message.Clone, Event fields).
type Event struct {
	Kind EventKind
	Turn int

	// Stream is the provider event of an EventStream; Message is the
	// stream's live partial message for EventStream and the final
	// assistant message for EventTurnEnd.
	Stream  *llm.Event
	Message *llm.Message

	// Tool calls (EventToolStart, EventToolEnd).
	ToolCallID string
	ToolName   string
	Args       []byte
	Result     *llm.Message
	Duration   time.Duration

	// EventSteer: the delivered text and its mode.
	Text string
	Mode SteerMode

	// EventRetry and EventRunEnd.
	Err  error
	Wait time.Duration

	// EventCompactionStart, EventCompactionEnd.
	Compaction *CompactionOutcome
}
