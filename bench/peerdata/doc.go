// Package peerdata is what package bench and the peer packages (the
// peers module) share: the declaration of every peer package and the
// benchmarks it runs (PeerPackages), the peers' names, and the very
// inputs ocbench's scenarios and the peers measure (WireStreams,
// RepairInputs, MixedText) with the helpers that check a peer against
// ocbench (RepairOurs, SameJSON).
//
// It exists so that a peer's test binary compiles only what it measures:
// it imports the wire decoders, the synthetic streams, the repair and the
// tokenizer packages, and none of engine, prompt, transcript (SQLite) or
// gateway, which package bench pulls in for its own scenarios. It does
// not run, time or report anything; package bench does.
package peerdata
