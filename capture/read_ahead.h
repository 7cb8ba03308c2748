// Reads a capture on a second thread, a batch of frames ahead of its consumer, so that copying
// records out of the file and decoding them run on two cores.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capture/pcap_reader.h"

namespace roceconf {

class ReadAhead {
 public:
  struct Batch {
    std::vector<std::uint8_t> bytes;   // the frames, back to back
    std::vector<std::uint32_t> ends;   // end offset of each frame in `bytes`
    std::vector<std::uint64_t> times;  // ns since the Unix epoch
    std::vector<std::uint32_t> orig_lengths;

    std::size_t size() const { return ends.size(); }
    CaptureFrame frame(std::size_t i) const;
  };

  // Takes the reader over and starts reading. A batch closes at `batch_bytes` or
  // `batch_frames`; at most `depth` batches wait for the consumer.
  explicit ReadAhead(PcapReader reader, std::size_t batch_bytes = 1 << 20,
                     std::size_t batch_frames = 4096, std::size_t depth = 4);
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;
  ~ReadAhead();  // stops the reading thread, even mid-file

  // The next batch, valid until the next call; nullptr at the end of the file or after a read
  // error (then error() says what; the frames before it were all delivered).
  const Batch* next();
  const std::string& error() const { return error_; }
  LinkType link_type() const { return link_; }

 private:
  void run();
  std::unique_ptr<Batch> take_free();

  PcapReader reader_;
  const LinkType link_;
  const std::size_t batch_bytes_;
  const std::size_t batch_frames_;
  const std::size_t depth_;

  std::mutex mutex_;
  std::condition_variable filled_cv_;
  std::condition_variable free_cv_;
  std::deque<std::unique_ptr<Batch>> filled_;
  std::vector<std::unique_ptr<Batch>> free_;
  std::unique_ptr<Batch> current_;  // held by the consumer
  bool done_ = false;               // the reader has delivered its last batch
  bool stop_ = false;               // the consumer is gone
  std::string error_;
  std::thread thread_;
};

}  // namespace roceconf
