package transcript

import (
	"strconv"

	"github.com/ocbench/ocbench/llm"
	"github.com/valyala/fastjson"
)

// ModelSnapshotType is the customType of OpenClaw's model-snapshot entry.
const ModelSnapshotType = "model-snapshot"

// ModelSnapshot is the data of a model-snapshot custom entry, which
// OpenClaw appends after sanitizing history when there was none or the
// model changed (spec §3.2 step 10).
type ModelSnapshot struct {
	Timestamp int64 // Unix ms
	Provider  string
	ModelAPI  string
	ModelID   string
}

// Same reports whether s and o name the same model.
func (s ModelSnapshot) Same(o ModelSnapshot) bool {
	return s.Provider == o.Provider && s.ModelAPI == o.ModelAPI && s.ModelID == o.ModelID
}

// Entry returns the custom entry recording s, ready for Writer.Append.
func (s ModelSnapshot) Entry() Entry {
	data := []byte(`{"timestamp":`)
	data = strconv.AppendInt(data, s.Timestamp, 10)
	data = append(data, `,"provider":`...)
	data = llm.AppendJSONString(data, s.Provider)
	data = append(data, `,"modelApi":`...)
	data = llm.AppendJSONString(data, s.ModelAPI)
	data = append(data, `,"modelId":`...)
	data = llm.AppendJSONString(data, s.ModelID)
	data = append(data, '}')
	return Entry{Type: TypeCustom, CustomType: []byte(ModelSnapshotType), Data: data, Timestamp: s.Timestamp}
}

// ParseModelSnapshot reads the snapshot of a model-snapshot entry; ok is
// false for any other entry.
func ParseModelSnapshot(e *Entry) (ModelSnapshot, bool) {
	if e.Type != TypeCustom || string(e.CustomType) != ModelSnapshotType || len(e.Data) == 0 {
		return ModelSnapshot{}, false
	}
	var p fastjson.Parser
	v, err := p.ParseBytes(e.Data)
	if err != nil || v.Type() != fastjson.TypeObject {
		return ModelSnapshot{}, false
	}
	return ModelSnapshot{
		Timestamp: v.GetInt64("timestamp"),
		Provider:  string(v.GetStringBytes("provider")),
		ModelAPI:  string(v.GetStringBytes("modelApi")),
		ModelID:   string(v.GetStringBytes("modelId")),
	}, true
}

// NeedsModelSnapshot reports whether cur must be recorded: when entries
// (in file order) hold no model-snapshot, or the last one names another
// model.
func NeedsModelSnapshot(entries []Entry, cur ModelSnapshot) bool {
	for i := len(entries) - 1; i >= 0; i-- {
		if s, ok := ParseModelSnapshot(&entries[i]); ok {
			return !s.Same(cur)
		}
	}
	return true
}
