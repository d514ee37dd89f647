// Outputs are written atomically: into a temporary file beside the target,
// flushed, then renamed over it, so a crash or a bad input never leaves a
// half-written file under the requested name. The temporary files of writers
// in progress are also listed where a signal handler can remove them
// (remove_temporary_files), so SIGINT or SIGTERM does not leave them behind.
//
// What is there already is never replaced by something else: an existing
// character device or named pipe (/dev/null, a FIFO, /dev/stdout) is written
// through, as cp and sort -o do, and a symbolic link keeps pointing where it
// did (the file it names is replaced). Directories, block devices and sockets
// are refused (output_target).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mha {

// Where writing `path` puts the bytes, and how.
struct OutputTarget {
  std::string path;            // the path, or the file its symbolic link names
  bool write_through = false;  // an existing character device or pipe: opened and written, never replaced
  std::string problem;         // "" or why nothing can be written there ("is a directory", ...)
};
OutputTarget output_target(const std::string& path);

// Returns an empty string on success, else a one-line error naming the path.
std::string write_file_atomically(const std::string& path, std::string_view bytes);

// The same, in pieces: a file written block by block (sample, forward), so
// that its size is not bounded by memory. Every error is one line naming
// `path` and sticks (later calls return it). Destroyed before publish() — an
// error, an exception, an early return — it removes the temporary file.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  const std::string& error() const { return error_; }
  std::string write(std::string_view bytes);
  // fsync and close the temporary file, then rename it over the path.
  std::string finish();
  std::string publish();

 private:
  std::string fail(const std::string& what);
  std::string path_, tmp_, error_;
  OutputTarget target_;
  int fd_ = -1;
  int slot_ = -1;  // its entry in the table remove_temporary_files reads
  bool finished_ = false, published_ = false;
};

// Temporary files are named <path>.tmp.XXXXXX (mkstemp).
// Removes every temporary file of an AtomicFileWriter not yet published or
// removed, from any thread. Async-signal-safe (it only reads a fixed table and
// calls unlink): for the CLI's SIGINT/SIGTERM handler, which then lets the
// signal end the process. Previous outputs are untouched (nothing was renamed).
// It waits for a writer in another thread that is creating its file, and from
// then on no writer creates one: call it only on the way to ending the process.
void remove_temporary_files() noexcept;

// Bytes free for an unprivileged user on the file system that holds `path`
// (or would hold it: its directory when it does not exist yet); -1 when that
// cannot be told.
int64_t free_bytes_for(const std::string& path);

// Reads a whole file. Returns false and sets `error` when it cannot be read
// (a directory says so).
bool read_whole_file(const std::string& path, std::string& bytes, std::string& error);

}  // namespace mha
