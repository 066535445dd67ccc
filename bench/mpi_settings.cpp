// open_mpi_setting: what Open MPI runs with, asked of Open MPI itself (MPI_T control variables)
// rather than inferred from the environment, so `transit info` shows the mechanism in effect.
#include <mpi.h>

#include <string>
#include <vector>

#include "bench.hpp"

namespace transit::bench {

#ifdef TRANSIT_SIMGRID
// SimGrid's SMPI has no MPI_T interface, and no Open MPI settings to report.
std::string open_mpi_setting(const char*, bool) { return {}; }
#else
namespace {

std::string read_variable(int index, bool by_name) {
  char name[256];
  char description[1024];
  int name_length = sizeof name, description_length = sizeof description;
  int verbosity = 0, binding = 0, scope = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumeration = MPI_T_ENUM_NULL;
  if (MPI_T_cvar_get_info(index, name, &name_length, &verbosity, &type, &enumeration, description,
                          &description_length, &binding, &scope) != MPI_SUCCESS)
    return {};
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) return {};
  std::string out;
  if (type == MPI_CHAR) {
    std::vector<char> text(static_cast<std::size_t>(count) + 1, '\0');
    if (MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS) out = text.data();
  } else if (type == MPI_INT || type == MPI_UNSIGNED) {
    int value = 0;
    if (MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) {
      out = std::to_string(value);
      int items = 0;
      char enum_name[256];
      int enum_name_length = sizeof enum_name;
      if (by_name && enumeration != MPI_T_ENUM_NULL &&
          MPI_T_enum_get_info(enumeration, &items, enum_name, &enum_name_length) == MPI_SUCCESS) {
        for (int i = 0; i < items; ++i) {
          int item_value = 0;
          char item[256];
          int item_length = sizeof item;
          if (MPI_T_enum_get_item(enumeration, i, &item_value, item, &item_length) == MPI_SUCCESS &&
              item_value == value)
            out = item;
        }
      }
    }
  }
  MPI_T_cvar_handle_free(&handle);
  return out;
}

}  // namespace

std::string open_mpi_setting(const char* name, bool by_name) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return {};
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return {};
  std::string out;
  int index = 0;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS) out = read_variable(index, by_name);
  MPI_T_finalize();
  return out;
}
#endif

}  // namespace transit::bench
