// `roceconf decode --split-by-connection DIR FILE`: one capture per connection (both directions
// of a QP pair with the CM exchange that binds its QPNs; analysis::ConnectionGroups says which
// frames belong together), plus other.pcap for frames of no connection, so that every frame is
// in exactly one shard and each shard analyses as it did in the whole capture. Shards can then
// be graded in parallel.
#pragma once

namespace roceconf::cli {

struct DecodeArgs;

// Reads args.file twice (group, then write), writes DIR/<shard>.pcap through DIR/.partial and
// prints one line (or, with args.json, one JSON object) per shard. Exit codes as run_decode.
int run_split(const DecodeArgs& args);

}  // namespace roceconf::cli
