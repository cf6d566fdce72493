// Package repair owns the argument decisions of a streamed tool call: given
// the bytes a provider sent as a tool call's arguments, it decides the final
// JSON object the tool receives, under one of three profiles (ProfileOpenClaw,
// ProfileExtended, ProfileOff).
//
// It is pure byte-slice code: every function appends its result to a caller
// supplied dst and, when dst has room, allocates nothing on valid input nor
// on the repairs themselves; the exceptions are the error values (*Error),
// typographic-quote objects of more than 16 keys, and pi-ai's last-resort
// partial parse of its escape-repaired text. It holds no state and is safe
// for concurrent use. Every entry point runs in time linear in its input.
//
// What it owns:
//   - Valid: a JSON validity check equal to encoding/json's.
//   - OpenClawShouldTry / OpenClawExtract: OpenClaw 2026.9.6's trigger rule and
//     its three repair strategies (whole buffer, balanced-prefix extraction,
//     smart-quote parser), including everything they do not repair.
//   - PiParse: pi-ai's parseStreamingJson (valid JSON, escape repair,
//     lossy partial-JSON parse, else {}), which decides OpenClaw's outcome
//     wherever OpenClaw's own repair does not run.
//   - Extended: the default profile. Valid objects pass byte for byte; the
//     real-world quirks (code fences, trailing commas, Python literals, single
//     quotes, double-encoded strings, concatenated objects, leading metadata,
//     smart quotes) are repaired without inventing content; truncated input is
//     refused with ErrTruncated, never closed.
//   - DecodeHTMLEntities / DecodeEntitiesInJSON: OpenClaw's xAI entity decoding.
//
// Outputs are JSON text. Where they keep input bytes (valid input, spans
// cut out of metadata) they keep them as they are: duplicate keys stay
// duplicated (JavaScript and encoding/json read the last one), numbers keep
// their spelling (a number beyond float64, which JavaScript reads as
// Infinity, stays as written). The differential tests compare with the
// reference implementations by value.
//
// What it does not own: the stream plumbing (which delta triggers what, the
// per-index buffers, writing results into the live message, gating by
// provider). That is package streamwrap, which calls these functions.
package repair
