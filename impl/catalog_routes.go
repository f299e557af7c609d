package impl

import (
	"net/http"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
)

// The catalog routes: each names its category and hands over to list or item.

func (s *Server) ListBuddies(w http.ResponseWriter, r *http.Request, p gen.ListBuddiesParams) {
	s.list(w, r, catalog.Buddies, p.Language)
}

func (s *Server) ListBuddyLevels(w http.ResponseWriter, r *http.Request, p gen.ListBuddyLevelsParams) {
	s.list(w, r, catalog.BuddyLevels, p.Language)
}

func (s *Server) GetBuddyLevel(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetBuddyLevelParams) {
	s.item(w, r, catalog.BuddyLevels, uuid, p.Language)
}

func (s *Server) GetBuddy(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetBuddyParams) {
	s.item(w, r, catalog.Buddies, uuid, p.Language)
}

func (s *Server) ListCompetitiveTierSets(w http.ResponseWriter, r *http.Request, p gen.ListCompetitiveTierSetsParams) {
	s.list(w, r, catalog.CompetitiveTiers, p.Language)
}

func (s *Server) GetCompetitiveTierSet(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetCompetitiveTierSetParams) {
	s.item(w, r, catalog.CompetitiveTiers, uuid, p.Language)
}

func (s *Server) ListCurrencies(w http.ResponseWriter, r *http.Request, p gen.ListCurrenciesParams) {
	s.list(w, r, catalog.Currencies, p.Language)
}

func (s *Server) GetCurrency(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetCurrencyParams) {
	s.item(w, r, catalog.Currencies, uuid, p.Language)
}

func (s *Server) ListEvents(w http.ResponseWriter, r *http.Request, p gen.ListEventsParams) {
	if p.Active == nil && p.At == nil {
		s.list(w, r, catalog.Events, p.Language)
		return
	}
	s.events(w, r, (*string)(p.Active), p.At, p.Language)
}

func (s *Server) GetEvent(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetEventParams) {
	s.item(w, r, catalog.Events, uuid, p.Language)
}

func (s *Server) ListFlex(w http.ResponseWriter, r *http.Request, p gen.ListFlexParams) {
	s.list(w, r, catalog.Flex, p.Language)
}

func (s *Server) GetFlex(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetFlexParams) {
	s.item(w, r, catalog.Flex, uuid, p.Language)
}

func (s *Server) ListGameModes(w http.ResponseWriter, r *http.Request, p gen.ListGameModesParams) {
	s.list(w, r, catalog.GameModes, p.Language)
}

func (s *Server) ListGameModeEquippables(w http.ResponseWriter, r *http.Request, p gen.ListGameModeEquippablesParams) {
	s.list(w, r, catalog.GameModeEquippables, p.Language)
}

func (s *Server) GetGameModeEquippable(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetGameModeEquippableParams) {
	s.item(w, r, catalog.GameModeEquippables, uuid, p.Language)
}

func (s *Server) GetGameMode(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetGameModeParams) {
	s.item(w, r, catalog.GameModes, uuid, p.Language)
}

func (s *Server) ListLevelBorders(w http.ResponseWriter, r *http.Request, p gen.ListLevelBordersParams) {
	if p.Level == nil {
		s.list(w, r, catalog.LevelBorders, p.Language)
		return
	}
	s.levelBorder(w, r, *p.Level, p.Language)
}

func (s *Server) GetLevelBorder(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetLevelBorderParams) {
	s.item(w, r, catalog.LevelBorders, uuid, p.Language)
}

func (s *Server) ListMaps(w http.ResponseWriter, r *http.Request, p gen.ListMapsParams) {
	s.list(w, r, catalog.Maps, p.Language)
}

func (s *Server) GetMap(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetMapParams) {
	s.item(w, r, catalog.Maps, uuid, p.Language)
}

func (s *Server) ListPlayerTitles(w http.ResponseWriter, r *http.Request, p gen.ListPlayerTitlesParams) {
	s.list(w, r, catalog.PlayerTitles, p.Language)
}

func (s *Server) GetPlayerTitle(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetPlayerTitleParams) {
	s.item(w, r, catalog.PlayerTitles, uuid, p.Language)
}

func (s *Server) ListPremierConferences(w http.ResponseWriter, r *http.Request, p gen.ListPremierConferencesParams) {
	s.list(w, r, catalog.PremierConferences, p.Language)
}

func (s *Server) GetPremierConference(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetPremierConferenceParams) {
	s.item(w, r, catalog.PremierConferences, uuid, p.Language)
}

func (s *Server) ListPremierLogos(w http.ResponseWriter, r *http.Request, p gen.ListPremierLogosParams) {
	s.list(w, r, catalog.PremierLogos, p.Language)
}

func (s *Server) GetPremierLogo(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetPremierLogoParams) {
	s.item(w, r, catalog.PremierLogos, uuid, p.Language)
}

func (s *Server) ListSeasons(w http.ResponseWriter, r *http.Request, p gen.ListSeasonsParams) {
	s.list(w, r, catalog.Seasons, p.Language)
}

func (s *Server) ListCompetitiveSeasons(w http.ResponseWriter, r *http.Request, p gen.ListCompetitiveSeasonsParams) {
	s.list(w, r, catalog.CompetitiveSeasons, p.Language)
}

func (s *Server) GetCompetitiveSeason(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetCompetitiveSeasonParams) {
	s.item(w, r, catalog.CompetitiveSeasons, uuid, p.Language)
}

func (s *Server) GetSeason(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetSeasonParams) {
	s.item(w, r, catalog.Seasons, uuid, p.Language)
}

func (s *Server) ListThemes(w http.ResponseWriter, r *http.Request, p gen.ListThemesParams) {
	s.list(w, r, catalog.Themes, p.Language)
}

func (s *Server) GetTheme(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetThemeParams) {
	s.item(w, r, catalog.Themes, uuid, p.Language)
}

func (s *Server) ListWeapons(w http.ResponseWriter, r *http.Request, p gen.ListWeaponsParams) {
	s.list(w, r, catalog.Weapons, p.Language)
}

func (s *Server) ListWeaponSkinChromas(w http.ResponseWriter, r *http.Request, p gen.ListWeaponSkinChromasParams) {
	s.list(w, r, catalog.WeaponSkinChromas, p.Language)
}

func (s *Server) GetWeaponSkinChroma(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetWeaponSkinChromaParams) {
	s.item(w, r, catalog.WeaponSkinChromas, uuid, p.Language)
}

func (s *Server) ListWeaponSkinLevels(w http.ResponseWriter, r *http.Request, p gen.ListWeaponSkinLevelsParams) {
	s.list(w, r, catalog.WeaponSkinLevels, p.Language)
}

func (s *Server) GetWeaponSkinLevel(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetWeaponSkinLevelParams) {
	s.item(w, r, catalog.WeaponSkinLevels, uuid, p.Language)
}

func (s *Server) ListWeaponSkins(w http.ResponseWriter, r *http.Request, p gen.ListWeaponSkinsParams) {
	s.list(w, r, catalog.WeaponSkins, p.Language)
}

func (s *Server) GetWeaponSkin(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetWeaponSkinParams) {
	s.item(w, r, catalog.WeaponSkins, uuid, p.Language)
}
func (s *Server) GetWeapon(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetWeaponParams) {
	s.item(w, r, catalog.Weapons, uuid, p.Language)
}

// ListAgents serves /v1/agents, filtered by isPlayableCharacter as the public
// API filters it.
func (s *Server) ListAgents(w http.ResponseWriter, r *http.Request, p gen.ListAgentsParams) {
	if p.IsPlayableCharacter == nil {
		s.list(w, r, catalog.Agents, p.Language)
		return
	}
	s.filtered(w, r, catalog.Agents, "isPlayableCharacter", string(*p.IsPlayableCharacter), p.Language)
}

func (s *Server) GetAgent(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetAgentParams) {
	s.item(w, r, catalog.Agents, uuid, p.Language)
}

func (s *Server) ListBundles(w http.ResponseWriter, r *http.Request, p gen.ListBundlesParams) {
	s.list(w, r, catalog.Bundles, p.Language)
}

func (s *Server) GetBundle(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetBundleParams) {
	s.item(w, r, catalog.Bundles, uuid, p.Language)
}

func (s *Server) ListContracts(w http.ResponseWriter, r *http.Request, p gen.ListContractsParams) {
	s.list(w, r, catalog.Contracts, p.Language)
}

func (s *Server) GetContract(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetContractParams) {
	s.item(w, r, catalog.Contracts, uuid, p.Language)
}

func (s *Server) ListPlayerCards(w http.ResponseWriter, r *http.Request, p gen.ListPlayerCardsParams) {
	s.list(w, r, catalog.PlayerCards, p.Language)
}

func (s *Server) GetPlayerCard(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetPlayerCardParams) {
	s.item(w, r, catalog.PlayerCards, uuid, p.Language)
}

func (s *Server) ListSprays(w http.ResponseWriter, r *http.Request, p gen.ListSpraysParams) {
	s.list(w, r, catalog.Sprays, p.Language)
}

func (s *Server) GetSpray(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetSprayParams) {
	s.item(w, r, catalog.Sprays, uuid, p.Language)
}

func (s *Server) ListSprayLevels(w http.ResponseWriter, r *http.Request, p gen.ListSprayLevelsParams) {
	s.list(w, r, catalog.SprayLevels, p.Language)
}

func (s *Server) GetSprayLevel(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetSprayLevelParams) {
	s.item(w, r, catalog.SprayLevels, uuid, p.Language)
}

func (s *Server) ListContentTiers(w http.ResponseWriter, r *http.Request, p gen.ListContentTiersParams) {
	s.list(w, r, catalog.ContentTiers, p.Language)
}

func (s *Server) GetContentTier(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetContentTierParams) {
	s.item(w, r, catalog.ContentTiers, uuid, p.Language)
}

func (s *Server) ListGear(w http.ResponseWriter, r *http.Request, p gen.ListGearParams) {
	s.list(w, r, catalog.Gear, p.Language)
}

func (s *Server) GetGear(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetGearParams) {
	s.item(w, r, catalog.Gear, uuid, p.Language)
}

func (s *Server) ListCeremonies(w http.ResponseWriter, r *http.Request, p gen.ListCeremoniesParams) {
	s.list(w, r, catalog.Ceremonies, p.Language)
}

func (s *Server) GetCeremony(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetCeremonyParams) {
	s.item(w, r, catalog.Ceremonies, uuid, p.Language)
}

func (s *Server) ListMissions(w http.ResponseWriter, r *http.Request, p gen.ListMissionsParams) {
	s.list(w, r, catalog.Missions, p.Language)
}

func (s *Server) GetMission(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetMissionParams) {
	s.item(w, r, catalog.Missions, uuid, p.Language)
}

func (s *Server) ListObjectives(w http.ResponseWriter, r *http.Request, p gen.ListObjectivesParams) {
	s.list(w, r, catalog.Objectives, p.Language)
}

func (s *Server) GetObjective(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetObjectiveParams) {
	s.item(w, r, catalog.Objectives, uuid, p.Language)
}
