#pragma once
// Nothing to import: this target only supplies the process entry point (see driver.c).
