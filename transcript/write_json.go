package transcript

import (
	"errors"
	"strconv"

	"github.com/ocbench/ocbench/llm"
)

// ErrBadEntry is returned by Writer.Append for an entry that cannot be
// written: an unknown type, or raw JSON fields that are not JSON.
var ErrBadEntry = errors.New("transcript: entry cannot be written")

// AppendEntryJSON appends e as one version-3 JSON line body (without the
// newline): {"type","id","parentId","timestamp",...fields of the type}.
// Raw JSON fields (Data, Details, Content, MessageJSON) are copied as they
// are; the caller guarantees they are valid JSON (Writer.Append checks).
func AppendEntryJSON(dst []byte, e *Entry) []byte {
	dst = append(dst, `{"type":`...)
	dst = llm.AppendJSONString(dst, e.Type.String())
	dst = append(dst, `,"id":`...)
	dst = llm.AppendJSONString(dst, e.ID)
	dst = append(dst, `,"parentId":`...)
	if len(e.ParentID) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = llm.AppendJSONString(dst, e.ParentID)
	}
	dst = append(dst, `,"timestamp":"`...)
	dst = appendISOMillis(dst, e.Timestamp)
	dst = append(dst, '"')
	str := func(dst []byte, key string, v []byte) []byte {
		dst = append(dst, ',', '"')
		dst = append(dst, key...)
		dst = append(dst, '"', ':')
		return llm.AppendJSONString(dst, v)
	}
	raw := func(dst []byte, key string, v []byte) []byte {
		if len(v) == 0 {
			return dst
		}
		dst = append(dst, ',', '"')
		dst = append(dst, key...)
		dst = append(dst, '"', ':')
		return append(dst, v...)
	}
	switch e.Type {
	case TypeMessage:
		dst = append(dst, `,"message":`...)
		if e.Message != nil {
			dst = e.Message.AppendJSON(dst)
		} else {
			dst = append(dst, e.MessageJSON...)
		}
	case TypeModelChange:
		dst = str(dst, "provider", e.Provider)
		dst = str(dst, "modelId", e.ModelID)
	case TypeThinkingLevelChange:
		dst = str(dst, "thinkingLevel", e.ThinkingLevel)
	case TypeCompaction:
		dst = str(dst, "summary", e.Summary)
		dst = str(dst, "firstKeptEntryId", e.FirstKeptEntryID)
		dst = append(dst, `,"tokensBefore":`...)
		dst = strconv.AppendInt(dst, e.TokensBefore, 10)
		dst = raw(dst, "details", e.Details)
		if e.FromHook {
			dst = append(dst, `,"fromHook":true`...)
		}
	case TypeBranchSummary:
		dst = str(dst, "fromId", e.FromID)
		dst = str(dst, "summary", e.Summary)
		dst = raw(dst, "details", e.Details)
		if e.FromHook {
			dst = append(dst, `,"fromHook":true`...)
		}
	case TypeCustom:
		dst = str(dst, "customType", e.CustomType)
		dst = raw(dst, "data", e.Data)
	case TypeCustomMessage:
		dst = str(dst, "customType", e.CustomType)
		if len(e.Content) == 0 {
			dst = append(dst, `,"content":""`...)
		} else {
			dst = raw(dst, "content", e.Content)
		}
		dst = append(dst, `,"display":`...)
		dst = strconv.AppendBool(dst, e.Display)
		dst = raw(dst, "details", e.Details)
	case TypeLabel:
		dst = str(dst, "targetId", e.TargetID)
		dst = str(dst, "label", e.Label)
	case TypeSessionInfo:
		dst = str(dst, "name", e.Name)
	case TypeReset:
		dst = str(dst, "reason", e.Reason)
		if len(e.FirstKeptEntryID) > 0 {
			dst = str(dst, "firstKeptEntryId", e.FirstKeptEntryID)
		}
	case TypeLeaf:
		dst = append(dst, `,"targetId":`...)
		if len(e.TargetID) == 0 {
			dst = append(dst, "null"...)
		} else {
			dst = llm.AppendJSONString(dst, e.TargetID)
		}
		if e.AppendParentSet {
			dst = append(dst, `,"appendParentId":`...)
			if len(e.AppendParentID) == 0 {
				dst = append(dst, "null"...)
			} else {
				dst = llm.AppendJSONString(dst, e.AppendParentID)
			}
		}
	}
	if e.AppendSide {
		dst = append(dst, `,"appendMode":"side"`...)
	}
	return append(dst, '}')
}

// appendHeaderJSON appends h as a version-3 header line body.
func appendHeaderJSON(dst []byte, h *Header) []byte {
	return AppendHeaderJSON(dst, h, 3)
}

// AppendHeaderJSON appends h as a header of the given version:
// {"type":"session","version":V,"id","timestamp","cwd"[,"parentSession"]},
// the fields and order of OpenClaw's createSessionTranscriptHeader.
func AppendHeaderJSON(dst []byte, h *Header, version int) []byte {
	dst = append(dst, `{"type":"session","version":`...)
	dst = strconv.AppendInt(dst, int64(version), 10)
	dst = append(dst, `,"id":`...)
	dst = llm.AppendJSONString(dst, h.ID)
	dst = append(dst, `,"timestamp":"`...)
	dst = appendISOMillis(dst, h.Timestamp)
	dst = append(dst, `","cwd":`...)
	dst = llm.AppendJSONString(dst, h.Cwd)
	if h.ParentSession != "" {
		dst = append(dst, `,"parentSession":`...)
		dst = llm.AppendJSONString(dst, h.ParentSession)
	}
	return append(dst, '}')
}
