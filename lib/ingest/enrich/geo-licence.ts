// The bundled country database and the notice it needs. The package itself is CC0-1.0 (no
// conditions); its data comes from the regional internet registries' whois records, which the NRO
// publishes under CC BY 4.0 on condition of attribution, so wherever Plumb names the database
// (--help, README) it says both. It maps an address to a country only: no regions, no cities.
export const BUNDLED_GEO_DATABASE = {
  package: '@ip-location-db/geo-whois-asn-country-mmdb',
  /** As the installed package's `license` field states it (a test compares them). */
  licence: 'CC0-1.0',
  attribution:
    '@ip-location-db/geo-whois-asn-country-mmdb (CC0-1.0), built from whois data of the regional internet registries, © Number Resource Organization (nro.net), CC BY 4.0',
} as const;
