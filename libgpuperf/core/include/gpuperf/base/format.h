#pragma once
// Numbers and units as people read them: significant digits, not std::to_string's six fixed
// decimals ("200" and "9.454", not "200.000000" and "9.453949"; "1e-300", not "0.000000"), bytes
// in binary units, durations in hours and minutes. Every printer and message uses these.
//
//   throw ConfigError("ServingOptions::rate", "must be > 0, got " + gpuperf::format_number(rate));
//   log::info("peak " + gpuperf::format_bytes(peak) + ", " + gpuperf::format_duration(left) + "
//   left");

#include <cstddef>
#include <string>

namespace gpuperf {

/// `value` with at most `significant` significant digits, in the shorter of fixed and
/// scientific notation (printf's %g); "inf", "-inf" and "nan" as such.
[[nodiscard]] std::string format_number(double value, int significant = 4);

/// `value` with exactly `decimals` decimals (printf's %.*f: "nan" and "inf" as such).
[[nodiscard]] std::string format_fixed(double value, int decimals);

/// format_fixed(), or `absent` when `value` is not finite (a quantity not measured).
[[nodiscard]] std::string format_fixed_or(double value, int decimals, const char* absent = "n/a");

/// A whole number with thousands separators, rounded ("25,557,032", "-1,234"); "n/a" when not
/// finite.
[[nodiscard]] std::string format_grouped(double value);

/// A table cell or chart label: three significant digits in fixed notation, never scientific
/// ("0.0500", "2.35", "51.2"), whole numbers grouped from 100 up ("1,979"); `absent` when not
/// finite.
[[nodiscard]] std::string format_readable(double value, const char* absent = "n/a");

/// A fraction as a percentage with `significant` significant digits ("19.4%", "5.3%", "100%");
/// "n/a" when not finite.
[[nodiscard]] std::string format_percent(double fraction, int significant = 3);

/// Seconds as milliseconds with `decimals` decimals ("1.234 ms"); "n/a" when not finite. Table
/// cells under a "ms" heading write format_fixed_or(seconds * 1e3, decimals).
[[nodiscard]] std::string format_ms(double seconds, int decimals = 3);

/// Bytes in binary units as "1.23 GiB" (B, KiB, MiB, GiB, TiB; whole bytes below 1 KiB); "n/a"
/// for NaN. What a device or a process holds.
[[nodiscard]] std::string format_bytes(double bytes);

/// Bytes in decimal gigabytes with 4 significant digits ("80 GB", "12.35 GB", "0.05 GB"); "n/a"
/// when not finite. What datasheets and memory plans count in (1 GB = 1e9 bytes).
[[nodiscard]] std::string format_gb(double bytes);

/// A size in the largest binary unit that divides it exactly ("1536 MiB", "1048572 B"): the sizes
/// of a sweep, which must read exact.
[[nodiscard]] std::string format_exact_bytes(double bytes);

/// Seconds as "2 h 05 min" / "3.2 min" / "12.3 s"; "n/a" for NaN.
[[nodiscard]] std::string format_duration(double seconds);

/// `text` safe to print in a table or a terminal: control characters (NUL, line breaks, tabs,
/// the escape that starts terminal sequences, DEL) become visible "\xNN" escapes, and the
/// invisible Unicode controls (C1 controls, bidirectional marks and overrides such as U+202E)
/// "\uNNNN", so that a device name or file name read from a file can neither break a Markdown
/// row, nor drive the terminal, nor reorder what a reader sees.
[[nodiscard]] std::string printable(const std::string& text);

/// The length in bytes (2 or 3) of an invisible Unicode control starting at `text[i]` (a C1
/// control, or a bidirectional mark, embedding, override or isolate), its code point in
/// `*code_point`; 0 when there is none.
[[nodiscard]] std::size_t invisible_control_at(const std::string& text, std::size_t i,
                                               unsigned* code_point);

}  // namespace gpuperf
