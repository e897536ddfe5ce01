// The shared Catch2 main. v3 brings its own (Catch2::Catch2WithMain); v2 makes it here.
#if !__has_include(<catch2/catch_all.hpp>)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
