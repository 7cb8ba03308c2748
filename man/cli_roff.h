// A man page (roff) written from a CLI11 App tree: the same names, types and descriptions that
// --help prints, so the page cannot drift from the command line (packaging/README.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace roceconf::man {

// Text safe in roff: backslashes, hyphens (so they copy as ASCII '-'), and a leading '.' or '\''.
inline std::string roff_escape(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

inline bool shown(const CLI::Option* o) {
  return !o->get_group().empty();
}
inline bool shown(const CLI::App* a) {
  return !a->get_group().empty();
}

inline void write_options(std::string& out, const CLI::App& app) {
  for (const CLI::Option* o : app.get_options([](const CLI::Option* o) { return shown(o); })) {
    std::string names = o->get_name(false, true);
    if (names.empty()) names = o->get_name(true, false);
    out += ".TP\n.B " + roff_escape(names);
    const std::string type = o->get_type_name();
    if (!type.empty() && o->get_type_size() != 0)
      out += " \" \" \"\\fI" + roff_escape(type) + "\\fR\"";
    out += "\n" + roff_escape(o->get_description()) + "\n";
  }
}

inline void write_commands(std::string& out, const CLI::App& app, const std::string& prefix) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* a) { return shown(a); })) {
    const std::string name = prefix + " " + sub->get_name();
    out += ".SS \"" + roff_escape(name) + "\"\n" + roff_escape(sub->get_description()) + "\n";
    write_options(out, *sub);
    write_commands(out, *sub, name);
  }
}

// The page of `app`: section `section` ("1", "8"), `see_also` already in roff.
inline std::string page(const CLI::App& app, std::string_view section, std::string_view version,
                        std::string_view see_also) {
  // CLI11 names an unnamed App after argv[0], which may be a path.
  std::string name = app.get_name();
  if (const auto slash = name.rfind('/'); slash != std::string::npos) name.erase(0, slash + 1);
  std::string upper;
  for (char c : name) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  std::string out = ".TH " + upper + " " + std::string(section) + " \"\" \"" + name + " " +
                    std::string(version) + "\" \"roceconf\"\n";
  out += ".SH NAME\n" + roff_escape(name) + " \\- " + roff_escape(app.get_description()) + "\n";
  const auto subs = app.get_subcommands([](const CLI::App* a) { return shown(a); });
  out += ".SH SYNOPSIS\n.B " + roff_escape(name) + "\n" +
         (subs.empty() ? "[\\fIOPTIONS\\fR]\n"
                       : "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n");
  out += ".SH OPTIONS\n";
  write_options(out, app);
  if (!subs.empty()) {
    out += ".SH COMMANDS\n";
    write_commands(out, app, name);
  }
  if (!app.get_footer().empty()) out += ".SH NOTES\n" + roff_escape(app.get_footer()) + "\n";
  out += ".SH SEE ALSO\n" + std::string(see_also) + "\n";
  return out;
}

}  // namespace roceconf::man
