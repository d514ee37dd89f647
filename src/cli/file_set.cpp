#include "cli/file_set.hpp"

namespace mha::cli {

namespace {

class NpyOut : public commands::ArrayOut {
 public:
  explicit NpyOut(std::shared_ptr<NpyWriter> w) : w_(std::move(w)) {}
  std::string append_int8(const int8_t* data, int64_t count) override { return w_->append_int8(data, count); }
  std::string append_float64(const double* data, int64_t count) override { return w_->append_float64(data, count); }

 private:
  std::shared_ptr<NpyWriter> w_;
};

}  // namespace

std::string FileSet::open_array(const std::string& path, const std::vector<int64_t>& shape, NpyDtype dtype,
                                std::unique_ptr<commands::ArrayOut>& out) {
  auto w = std::make_shared<NpyWriter>(path, shape, dtype);
  if (!w->error().empty()) return w->error();
  arrays_.push_back(w);
  out = std::make_unique<NpyOut>(std::move(w));
  return "";
}

void FileSet::add(const std::string& path, std::string bytes) { documents_.emplace_back(path, std::move(bytes)); }

std::string FileSet::publish() {
  // Every file complete and flushed first.
  for (const auto& a : arrays_)
    if (auto e = a->finish(); !e.empty()) return e;
  std::vector<std::unique_ptr<AtomicFileWriter>> files, through;
  for (const auto& [path, bytes] : documents_) {
    if (output_target(path).write_through) continue;
    files.push_back(std::make_unique<AtomicFileWriter>(path));
    if (auto e = files.back()->write(bytes); !e.empty()) return e;
    if (auto e = files.back()->finish(); !e.empty()) return e;
  }
  // Then into place, one after the other.
  for (const auto& a : arrays_)
    if (auto e = a->publish(); !e.empty()) return e;
  for (const auto& f : files)
    if (auto e = f->publish(); !e.empty()) return e;
  for (const auto& [path, bytes] : documents_)
    if (output_target(path).write_through)
      if (auto e = write_file_atomically(path, bytes); !e.empty()) return e;
  return "";
}

}  // namespace mha::cli
