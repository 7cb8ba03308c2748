#include "capture/read_ahead.h"

#include <utility>

namespace roceconf {

CaptureFrame ReadAhead::Batch::frame(std::size_t i) const {
  const std::uint32_t begin = i == 0 ? 0 : ends[i - 1];
  return CaptureFrame{Bytes(bytes.data() + begin, ends[i] - begin), times[i], orig_lengths[i]};
}

ReadAhead::ReadAhead(PcapReader reader, std::size_t batch_bytes, std::size_t batch_frames,
                     std::size_t depth)
    : reader_(std::move(reader)),
      link_(reader_.link_type()),
      batch_bytes_(batch_bytes),
      batch_frames_(batch_frames),
      depth_(depth < 1 ? 1 : depth) {
  thread_ = std::thread([this] { run(); });
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  free_cv_.notify_all();
  thread_.join();
}

std::unique_ptr<ReadAhead::Batch> ReadAhead::take_free() {
  std::unique_lock lock(mutex_);
  free_cv_.wait(lock, [&] { return stop_ || filled_.size() < depth_; });
  if (stop_) return nullptr;
  if (free_.empty()) return std::make_unique<Batch>();
  auto batch = std::move(free_.back());
  free_.pop_back();
  return batch;
}

void ReadAhead::run() {
  std::string error;
  bool at_end = false;
  while (!at_end) {
    std::unique_ptr<Batch> batch = take_free();
    if (!batch) return;
    batch->bytes.clear();
    batch->ends.clear();
    batch->times.clear();
    batch->orig_lengths.clear();
    while (batch->bytes.size() < batch_bytes_ && batch->ends.size() < batch_frames_) {
      auto next = reader_.next();
      if (!next) {
        error = std::move(next.error());
        at_end = true;
        break;
      }
      if (!*next) {
        at_end = true;
        break;
      }
      const CaptureFrame& f = **next;
      batch->bytes.insert(batch->bytes.end(), f.data.begin(), f.data.end());
      batch->ends.push_back(static_cast<std::uint32_t>(batch->bytes.size()));
      batch->times.push_back(f.time_ns);
      batch->orig_lengths.push_back(f.orig_length);
    }
    {
      std::lock_guard lock(mutex_);
      if (batch->size() > 0) filled_.push_back(std::move(batch));
      if (at_end) {
        done_ = true;
        error_ = std::move(error);
      }
    }
    filled_cv_.notify_one();
  }
}

const ReadAhead::Batch* ReadAhead::next() {
  std::unique_lock lock(mutex_);
  if (current_) free_.push_back(std::move(current_));
  free_cv_.notify_one();
  filled_cv_.wait(lock, [&] { return !filled_.empty() || done_; });
  if (filled_.empty()) return nullptr;
  current_ = std::move(filled_.front());
  filled_.pop_front();
  return current_.get();
}

}  // namespace roceconf
