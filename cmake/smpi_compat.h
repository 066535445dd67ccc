// Force-included into every file of a SimGrid build (TRANSIT_SIMGRID, `make sim`). smpicxx itself
// force-includes smpi/smpi_helpers.h, whose function-like macros replace sleep, malloc, getpid and
// exit with SMPI's versions; exit and getpid also name members elsewhere (CLI11's App::exit), so
// they are undone here, after that header has been read once.
#include <smpi/smpi_helpers.h>
#undef exit
#undef getpid
