/*
 * hint — what a user can install to get names for a module without symbols.
 *
 * The module's owner is looked up in dpkg's file lists (which package put
 * this file here), so the hint names the package's debug symbols: Debian
 * builds "PKG-dbgsym" for every package, in the debian-debug archive (the
 * report says so), and a few packages ship their own "-dbg" (the C
 * library).  Debian 12 merged /usr,
 * so a file mapped as /usr/lib/... is listed as /lib/... too: both spellings
 * are tried.  Files no package owns (built here) get the advice to keep
 * their symbols; the vdso gets the kernel's unstripped image.
 */
#include "symbols/symbols.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* STACKCLOCK_DPKG_INFO replaces /var/lib/dpkg/info (tests). */
static const char *dpkg_info_dir(void)
{
	const char *d = getenv("STACKCLOCK_DPKG_INFO");

	return d && *d ? d : "/var/lib/dpkg/info";
}

/* Does list file path name the file want (or alt)? */
static bool list_has(const char *path, const char *want, const char *alt)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = !strcmp(line, want) || (alt && !strcmp(line, alt));
	}
	fclose(f);
	return found;
}

/* The Debian package that installed path, or NULL; malloc'ed. */
static char *dpkg_owner(const char *path)
{
	const char *dir = dpkg_info_dir();
	const char *alt = !strncmp(path, "/usr/", 5) ? path + 4 : NULL;
	char *owner = NULL;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return NULL;
	while (!owner && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *list;

		if (len < 6 || strcmp(de->d_name + len - 5, ".list"))
			continue;
		list = xasprintf("%s/%s", dir, de->d_name);
		if (list_has(list, path, alt)) {
			/* "gzip.list", "libc6:amd64.list": the name before ':' */
			size_t n = strcspn(de->d_name, ":");
			owner = xasprintf("%.*s", (int)(n < len - 5 ? n : len - 5),
					  de->d_name);
		}
		free(list);
	}
	closedir(d);
	return owner;
}

char *sym_debug_hint(const char *module)
{
	char *pkg, *hint;

	if (!module || module[0] != '/') {
		if (module && !strcmp(module, "[vdso]"))
			return xstrdup("the kernel's unstripped vdso "
				       "(/lib/modules/RELEASE/vdso/vdso64.so) names its local functions");
		return xstrdup("no file to read symbols from");
	}
	pkg = dpkg_owner(module);
	if (!pkg)
		return xstrdup("build it with -g, or do not strip it");
	if (!strcmp(pkg, "libc6"))
		hint = xstrdup("apt install libc6-dbg");
	else
		hint = xasprintf("apt install %s-dbgsym", pkg);
	free(pkg);
	return hint;
}
